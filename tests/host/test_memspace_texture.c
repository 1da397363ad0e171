/*
 * FAULT INJECTION: texture and surface objects of memspace.h. The descriptor's rules as a pure
 * function (cm__texture_check: every rule alone, several at once, the limits), then through the
 * API on the simulated GPUs of test_full_fake.h (which counts as a violation any descriptor CUDA
 * would refuse or silently change, and any memory freed under a live texture object): textures
 * over buffers, pitched buffers and arrays, surfaces, destroyed handles, memory destroyed under
 * a texture or surface (refused, naming it), device close and leak report, failures.
 */
#include "test_memspace.h"

/* ---------------------------------------------------------------- the rules (pure) */

/* A target of each kind that breaks nothing with the default descriptor. */
static cm__tex_target_t target(cm__kind_t kind) {
    cm__tex_target_t t;
    memset(&t, 0, sizeof t);
    t.kind = kind;
    t.format = kind == CM__KIND_BUFFER ? CM_FORMAT_NONE : CM_FORMAT_U8;
    t.width = kind == CM__KIND_BUFFER ? 4096 : 640;
    t.height = kind == CM__KIND_BUFFER ? 1 : 480;
    t.pitch = 1024;
    t.base = 0x7f0000000000u;
    t.range_bytes = 4096;
    t.texture_alignment = 512;
    t.texture_pitch_alignment = 32;
    t.max_1d_linear = 1 << 27;
    t.max_2d_linear_width = 131072;
    t.max_2d_linear_height = 65000;
    t.max_2d_linear_pitch = 2097120;
    t.max_2d_width = 131072;
    t.max_2d_height = 65536;
    return t;
}

static unsigned check(const cm__tex_target_t *t, const cm_texture_desc_t *d, char *msg,
                      char *hint) {
    cm_format_t f = CM_FORMAT_NONE;
    return cm__texture_check(t, d, &f, msg, CM_ERROR_MESSAGE_MAX, hint, CM_ERROR_HINT_MAX);
}

#define EXPECT_RULES(t, d, n, sub, hsub)                                                     \
    do {                                                                                     \
        char m_[CM_ERROR_MESSAGE_MAX], h_[CM_ERROR_HINT_MAX];                                \
        unsigned got_ = check((t), (d), m_, h_);                                             \
        if (got_ != (n) || ((n) > 0 && strstr(m_, (sub)) == NULL) ||                        \
            ((hsub) != NULL && strstr(h_, (hsub) != NULL ? (hsub) : "") == NULL))            \
            fail_msg("%u rules (expected %u): \"%s\" (hint \"%s\"), wanted \"%s\"", got_,     \
                     (unsigned)(n), m_, h_, (sub));                                          \
    } while (0)

static void test_rules_defaults_pass(void **state) {
    (void)state;
    cm_texture_desc_t d = CM_TEXTURE_DESC_INIT;
    cm__tex_target_t p = target(CM__KIND_PITCHED), a = target(CM__KIND_ARRAY);
    EXPECT_RULES(&p, &d, 0, "", NULL);
    EXPECT_RULES(&a, &d, 0, "", NULL);
    cm__tex_target_t b = target(CM__KIND_BUFFER);
    d.format = CM_FORMAT_F32;
    EXPECT_RULES(&b, &d, 0, "", NULL);
    cm_format_t f = CM_FORMAT_NONE;
    char msg[8] = "x";
    assert_int_equal(cm__texture_check(&b, &d, &f, msg, sizeof msg, NULL, 0), 0);
    assert_int_equal(f, CM_FORMAT_F32);
    assert_string_equal(msg, "");
    /* every valid combination for a float array passes */
    a.format = CM_FORMAT_F32X4;
    for (int am = 0; am <= 3; ++am)
        for (int fm = 0; fm <= 1; ++fm)
            for (int nc = 0; nc <= 1; ++nc) {
                cm_texture_desc_t e = CM_TEXTURE_DESC_INIT;
                e.address_mode = (cm_address_mode_t)am;
                e.filter_mode = (cm_filter_mode_t)fm;
                e.normalized_coords = nc != 0;
                unsigned want = (!nc && (am == CM_ADDRESS_WRAP || am == CM_ADDRESS_MIRROR)) ? 1u : 0u;
                EXPECT_RULES(&a, &e, want, "needs normalized_coords", NULL);
            }
}

static void test_rules_enums(void **state) {
    (void)state;
    cm__tex_target_t a = target(CM__KIND_ARRAY);
    cm_texture_desc_t d = CM_TEXTURE_DESC_INIT;
    d.address_mode = (cm_address_mode_t)4;
    EXPECT_RULES(&a, &d, 1, "desc.address_mode 4 is not a cm_address_mode_t", "CM_ADDRESS_CLAMP");
    d = (cm_texture_desc_t)CM_TEXTURE_DESC_INIT;
    d.filter_mode = (cm_filter_mode_t)-1;
    EXPECT_RULES(&a, &d, 1, "desc.filter_mode -1 is not a cm_filter_mode_t", NULL);
    d = (cm_texture_desc_t)CM_TEXTURE_DESC_INIT;
    d.read_mode = (cm_read_mode_t)2;
    EXPECT_RULES(&a, &d, 1, "desc.read_mode 2 is not a cm_read_mode_t", NULL);
    d = (cm_texture_desc_t)CM_TEXTURE_DESC_INIT;
    d.format = (cm_format_t)30;
    EXPECT_RULES(&a, &d, 1, "desc.format 30 is not a cm_format_t", NULL);
}

static void test_rules_formats_and_filtering(void **state) {
    (void)state;
    cm__tex_target_t a = target(CM__KIND_ARRAY);
    cm_texture_desc_t d = CM_TEXTURE_DESC_INIT;
    /* linear filtering of an integer format needs normalised-float reads */
    d.filter_mode = CM_FILTER_LINEAR;
    EXPECT_RULES(&a, &d, 1, "linear filtering of integer format CM_FORMAT_U8 needs read_mode "
                            "CM_READ_NORMALIZED_FLOAT", "CM_READ_NORMALIZED_FLOAT");
    d.read_mode = CM_READ_NORMALIZED_FLOAT;
    EXPECT_RULES(&a, &d, 0, "", NULL);
    a.format = CM_FORMAT_I16X2;
    EXPECT_RULES(&a, &d, 0, "", NULL);
    /* 32-bit integers are never converted: neither filtered nor read as normalised floats */
    a.format = CM_FORMAT_I32;
    EXPECT_RULES(&a, &d, 2, "linear filtering of 32-bit integer format CM_FORMAT_I32 is not "
                            "possible", "float format");
    d.filter_mode = CM_FILTER_POINT;
    EXPECT_RULES(&a, &d, 1, "CUDA would silently read CM_FORMAT_I32 unconverted", NULL);
    d.read_mode = CM_READ_ELEMENT_TYPE;
    d.filter_mode = CM_FILTER_LINEAR;
    EXPECT_RULES(&a, &d, 1, "32-bit integer format CM_FORMAT_I32", NULL);
    /* floats filter as they are; a normalised-float read of them has no effect (allowed) */
    a.format = CM_FORMAT_F16X4;
    EXPECT_RULES(&a, &d, 0, "", NULL);
    d.read_mode = CM_READ_NORMALIZED_FLOAT;
    EXPECT_RULES(&a, &d, 0, "", NULL);
    /* a format given for memory that has one must be that one */
    d = (cm_texture_desc_t)CM_TEXTURE_DESC_INIT;
    d.format = CM_FORMAT_F32;
    a.format = CM_FORMAT_U8X4;
    EXPECT_RULES(&a, &d, 1, "desc.format CM_FORMAT_F32 differs from the CUDA array's "
                            "CM_FORMAT_U8X4", "CM_FORMAT_NONE");
    d.format = CM_FORMAT_U8X4;
    EXPECT_RULES(&a, &d, 0, "", NULL);
}

static void test_rules_addressing(void **state) {
    (void)state;
    cm__tex_target_t p = target(CM__KIND_PITCHED);
    p.format = CM_FORMAT_F32;
    cm_texture_desc_t d = CM_TEXTURE_DESC_INIT;
    d.address_mode = CM_ADDRESS_WRAP;
    EXPECT_RULES(&p, &d, 1, "address_mode CM_ADDRESS_WRAP needs normalized_coords: with "
                            "unnormalised coordinates CUDA silently clamps", "normalized_coords");
    d.address_mode = CM_ADDRESS_MIRROR;
    EXPECT_RULES(&p, &d, 1, "CM_ADDRESS_MIRROR needs normalized_coords", NULL);
    d.normalized_coords = true;
    EXPECT_RULES(&p, &d, 0, "", NULL);
    d.normalized_coords = false;
    d.address_mode = CM_ADDRESS_BORDER;
    EXPECT_RULES(&p, &d, 0, "", NULL);
}

static void test_rules_linear_buffer(void **state) {
    (void)state;
    cm__tex_target_t b = target(CM__KIND_BUFFER);
    cm_texture_desc_t d = CM_TEXTURE_DESC_INIT;
    EXPECT_RULES(&b, &d, 1, "a texture over a cm_buffer_t needs desc.format", "CM_FORMAT_F32");
    d.format = CM_FORMAT_F32;
    d.filter_mode = CM_FILTER_LINEAR;
    EXPECT_RULES(&b, &d, 1, "CUDA ignores its filter_mode: CM_FILTER_LINEAR would silently "
                            "point-sample", "cm_texture_create_from_pitched()");
    d.filter_mode = CM_FILTER_POINT;
    d.address_mode = CM_ADDRESS_BORDER;
    EXPECT_RULES(&b, &d, 1, "ignores address_mode (CM_ADDRESS_BORDER)", NULL);
    d.address_mode = CM_ADDRESS_CLAMP;
    d.normalized_coords = true;
    EXPECT_RULES(&b, &d, 1, "normalized_coords does not apply", NULL);
    d.normalized_coords = false;
    b.range_bytes = 4098;
    EXPECT_RULES(&b, &d, 1, "the range of 4098 bytes is not a whole, non-zero number of 4-byte "
                            "CM_FORMAT_F32 elements", "multiple of 4 bytes");
    b.range_bytes = 0;
    EXPECT_RULES(&b, &d, 1, "the range of 0 bytes", NULL);
    b.range_bytes = 4096;
    b.base += 4;
    EXPECT_RULES(&b, &d, 1, "not a multiple of the device's textureAlignment of 512 bytes",
                 "multiple of 512");
    b.base -= 4;
    b.max_1d_linear = 1000;
    EXPECT_RULES(&b, &d, 1, "1024 elements exceed the device's maxTexture1DLinear of 1000", NULL);
    /* everything at once: each rule is listed, the first one's hint is given */
    d.filter_mode = CM_FILTER_LINEAR;
    d.address_mode = CM_ADDRESS_WRAP;
    d.normalized_coords = true;
    b.base += 8;
    char m[CM_ERROR_MESSAGE_MAX], h[CM_ERROR_HINT_MAX];
    assert_int_equal(check(&b, &d, m, h), 5);
    assert_non_null(strstr(m, "the texture over the cm_buffer_t breaks 5 rules: "));
    assert_non_null(strstr(h, "tex1Dfetch"));
}

static void test_rules_limits(void **state) {
    (void)state;
    cm_texture_desc_t d = CM_TEXTURE_DESC_INIT;
    cm__tex_target_t p = target(CM__KIND_PITCHED);
    p.pitch = 1000;
    EXPECT_RULES(&p, &d, 1, "pitch 1000 is not a multiple of the device's texturePitchAlignment "
                            "of 32 bytes", "multiple of 32 bytes");
    p.pitch = 1024;
    p.base += 256;
    EXPECT_RULES(&p, &d, 1, "textureAlignment of 512 bytes", NULL);
    p.base -= 256;
    p.width = 131073;
    p.height = 65001;
    p.pitch = 2097152;
    EXPECT_RULES(&p, &d, 3, "width 131073 exceeds the device's maxTexture2DLinear width of 131072",
                 "CUDA array");
    EXPECT_RULES(&p, &d, 3, "height 65001 exceeds the device's maxTexture2DLinear height of 65000",
                 NULL);
    EXPECT_RULES(&p, &d, 3, "pitch 2097152 exceeds the device's maxTexture2DLinear pitch of "
                            "2097120 bytes", NULL);
    cm__tex_target_t a = target(CM__KIND_ARRAY);
    a.width = 131073;
    a.height = 65537;
    EXPECT_RULES(&a, &d, 2, "width 131073 exceeds the device's maxTexture2D width of 131072", NULL);
    EXPECT_RULES(&a, &d, 2, "height 65537 exceeds the device's maxTexture2D height of 65536", NULL);
}

/* ---------------------------------------------------------------- textures through the API */

static void test_texture_over_array(void **state) {
    (void)state;
    cm_device_t *d = ms_open(0);
    cm_array_t *a = NULL;
    MS_OK(cm_array_create(d, 64, 64, CM_FORMAT_U8, 0, &a));
    cm_texture_desc_t desc = CM_TEXTURE_DESC_INIT;
    desc.filter_mode = CM_FILTER_LINEAR;
    cm_texture_t *t = NULL;
    MS_FAIL_HINT(cm_texture_create_from_array(a, &desc, &t), CM_ERROR_INVALID_ARGUMENT,
                 "the texture over the CUDA array breaks 1 rule: linear filtering of integer "
                 "format CM_FORMAT_U8 needs read_mode CM_READ_NORMALIZED_FLOAT",
                 "CM_READ_NORMALIZED_FLOAT");
    assert_null(t);
    desc.address_mode = CM_ADDRESS_WRAP;
    MS_FAIL(cm_texture_create_from_array(a, &desc, &t), CM_ERROR_INVALID_ARGUMENT,
            "breaks 2 rules");
    desc.read_mode = CM_READ_NORMALIZED_FLOAT;
    desc.normalized_coords = true;
    MS_OK(cm_texture_create_from_array(a, &desc, &t));
    unsigned long long obj = 0;
    MS_OK(cm_texture_object(t, &obj));
    assert_true(obj != 0);
    assert_int_equal(cmf_live_objects(CMF_TEXTURE), 1);
    /* NULL descriptor: every default */
    cm_texture_t *t2 = NULL;
    MS_OK(cm_texture_create_from_array(a, NULL, &t2));
    /* the array cannot go while the textures read it */
    MS_FAIL_HINT(cm_array_destroy(a), CM_ERROR_BUSY,
                 "arr (a cm_array_t) is read by texture #", "cm_texture_destroy()");
    assert_non_null(strstr(cm_last_error()->message,
                           "CM_FORMAT_U8, linear filtering, wrap, normalised coordinates, read as "
                           "normalised float), created at "));
    assert_non_null(strstr(cm_last_error()->message, "test_memspace_texture.c"));
    assert_non_null(strstr(cm_last_error()->message, "which would dangle; the CUDA array was left "
                                                     "alive"));
    MS_OK(cm_texture_destroy(t));
    MS_FAIL(cm_array_destroy(a), CM_ERROR_BUSY, "point sampling, clamp)"); /* the second one */
    /* the leak report lists the texture; the close is refused */
    char report[2048];
    MS_OK(cm_device_leak_report(d, report, sizeof report, NULL));
    assert_non_null(strstr(report, "texture over CUDA array #"));
    MS_FAIL(cm_device_close(d), CM_ERROR_BUSY, "texture over CUDA array");
    MS_OK(cm_texture_destroy(t2));
    MS_OK(cm_texture_destroy(NULL));
    MS_FAIL_HINT(cm_texture_destroy(t2), CM_ERROR_INVALID_ARGUMENT,
                 "tex was already destroyed: it was a texture (cm_texture_t)",
                 "cm_texture_destroy()");
    MS_FAIL(cm_texture_object(t2, &obj), CM_ERROR_INVALID_ARGUMENT, "already destroyed");
    MS_FAIL(cm_texture_object(NULL, &obj), CM_ERROR_INVALID_ARGUMENT, "tex is NULL");
    MS_OK(cm_array_destroy(a));
    /* a destroyed array cannot get a texture */
    MS_FAIL(cm_texture_create_from_array(a, NULL, &t), CM_ERROR_INVALID_ARGUMENT,
            "arr was already destroyed");
    MS_FAIL(cm_texture_create_from_array(a, NULL, NULL), CM_ERROR_INVALID_ARGUMENT, "out is NULL");
    MS_OK(cm_device_close(d));
}

static void test_texture_over_array_limits_and_format(void **state) {
    (void)state;
    cm_device_t *d = ms_open(0);
    cm_array_t *a = NULL;
    MS_OK(cm_array_create(d, 300, 200, CM_FORMAT_I32, 0, &a));
    cm_texture_desc_t desc = CM_TEXTURE_DESC_INIT;
    desc.read_mode = CM_READ_NORMALIZED_FLOAT;
    desc.format = CM_FORMAT_F32;
    cm_texture_t *t = NULL;
    MS_FAIL(cm_texture_create_from_array(a, &desc, &t), CM_ERROR_INVALID_ARGUMENT,
            "desc.format CM_FORMAT_F32 differs from the CUDA array's CM_FORMAT_I32");
    /* the device's limits are read at creation */
    cmf_set_attr(0, cudaDevAttrMaxTexture2DHeight, 100);
    desc = (cm_texture_desc_t)CM_TEXTURE_DESC_INIT;
    MS_FAIL(cm_texture_create_from_array(a, &desc, &t), CM_ERROR_INVALID_ARGUMENT,
            "height 200 exceeds the device's maxTexture2D height of 100");
    cmf_arm(cmf_member_index("device_get_attribute"), 0, 1, cudaErrorUnknown);
    MS_FAIL(cm_texture_create_from_array(a, &desc, &t), CM_ERROR_CUDA,
            NULL);
    (void)cmf_disarm();
    assert_non_null(strstr(cm_last_error()->call, "cudaDevAttrMaxTexture2DWidth"));
    assert_null(t);
    MS_OK(cm_array_destroy(a));
    MS_OK(cm_device_close(d));
}

static void test_texture_over_buffer(void **state) {
    (void)state;
    cm_device_t *d = ms_open(0);
    cm_buffer_t *b = NULL;
    MS_OK(cm_buffer_create(d, 8192, &b));
    cm_texture_desc_t desc = CM_TEXTURE_DESC_INIT;
    cm_texture_t *t = NULL;
    MS_FAIL_HINT(cm_texture_create_from_buffer(b, 0, 4096, NULL, &t), CM_ERROR_INVALID_ARGUMENT,
                 "desc is NULL: a texture over a cm_buffer_t needs desc.format", "desc.format");
    MS_FAIL(cm_texture_create_from_buffer(b, 0, 4096, &desc, &t), CM_ERROR_INVALID_ARGUMENT,
            "needs desc.format: a buffer has no element format");
    desc.format = CM_FORMAT_F32;
    MS_FAIL_HINT(cm_texture_create_from_buffer(b, 4096, 8192, &desc, &t),
                 CM_ERROR_INVALID_ARGUMENT,
                 "buf range out of bounds: offset 4096 + 8192 bytes = 12288 is past the end of "
                 "the 8192-byte cm_buffer_t", NULL);
    MS_FAIL(cm_texture_create_from_buffer(b, 4, 4096, &desc, &t), CM_ERROR_INVALID_ARGUMENT,
            "not a multiple of the device's textureAlignment of 512 bytes");
    desc.filter_mode = CM_FILTER_LINEAR;
    desc.address_mode = CM_ADDRESS_WRAP;
    desc.normalized_coords = true;
    MS_FAIL(cm_texture_create_from_buffer(b, 0, 4096, &desc, &t), CM_ERROR_INVALID_ARGUMENT,
            "the texture over the cm_buffer_t breaks 3 rules");
    desc = (cm_texture_desc_t)CM_TEXTURE_DESC_INIT;
    desc.format = CM_FORMAT_U8X4;
    MS_OK(cm_texture_create_from_buffer(b, 512, 4096, &desc, &t));
    assert_null(NULL);
    /* the buffer cannot be destroyed under the texture, on a stream either */
    MS_FAIL_HINT(cm_buffer_destroy(b), CM_ERROR_BUSY,
                 "buf (a cm_buffer_t) is read by texture #", "cm_texture_destroy()");
    assert_non_null(strstr(cm_last_error()->message, "over device buffer #"));
    assert_non_null(strstr(cm_last_error()->message, "(1024 elements CM_FORMAT_U8X4, point "
                                                     "sampling, clamp)"));
    cm_stream_t *s = ms_stream(d);
    MS_FAIL(cm_buffer_destroy_on_stream(s, b), CM_ERROR_BUSY, "is read by texture #");
    /* and stays usable */
    unsigned char bytes[64] = {1, 2, 3};
    MS_OK(cm_buffer_copy_from_host(NULL, b, 0, bytes, sizeof bytes));
    MS_OK(cm_stream_release(s));
    MS_OK(cm_texture_destroy(t));
    MS_OK(cm_buffer_destroy(b));
    MS_OK(cm_device_close(d));
}

static void test_texture_over_pitched(void **state) {
    (void)state;
    cm_device_t *d = ms_open(0);
    cm_pitched_t *p = NULL;
    MS_OK(cm_pitched_create(d, 100, 50, CM_FORMAT_F32, &p));
    cm_texture_desc_t desc = CM_TEXTURE_DESC_INIT;
    desc.filter_mode = CM_FILTER_LINEAR;
    desc.address_mode = CM_ADDRESS_MIRROR;
    desc.normalized_coords = true;
    cm_texture_t *t = NULL;
    MS_OK(cm_texture_create_from_pitched(p, &desc, &t));
    MS_FAIL(cm_pitched_destroy(p), CM_ERROR_BUSY, "img (a cm_pitched_t) is read by texture #");
    assert_non_null(strstr(cm_last_error()->message, "over pitched buffer #"));
    MS_OK(cm_texture_destroy(t));
    MS_OK(cm_pitched_destroy(p));
    /* a pitch the device's texture unit cannot take (the simulation's rows at 48 bytes) */
    cmf.pitch_align = 48;
    MS_OK(cm_pitched_create(d, 10, 4, CM_FORMAT_F32, &p));
    MS_FAIL_HINT(cm_texture_create_from_pitched(p, NULL, &t), CM_ERROR_INVALID_ARGUMENT,
                 "pitch 48 is not a multiple of the device's texturePitchAlignment of 32 bytes",
                 "multiple of 32 bytes");
    cmf_set_attr(0, cudaDevAttrMaxTexture2DLinearWidth, 8);
    MS_FAIL(cm_texture_create_from_pitched(p, NULL, &t), CM_ERROR_INVALID_ARGUMENT,
            "breaks 2 rules");
    MS_OK(cm_pitched_destroy(p));
    MS_FAIL(cm_texture_create_from_pitched(p, NULL, &t), CM_ERROR_INVALID_ARGUMENT,
            "img was already destroyed");
    MS_OK(cm_device_close(d));
}

/* ---------------------------------------------------------------- surfaces */

static void test_surfaces(void **state) {
    (void)state;
    cm_device_t *d = ms_open(1);
    cm_array_t *plain = NULL, *rw = NULL;
    MS_OK(cm_array_create(d, 32, 32, CM_FORMAT_F32X4, 0, &plain));
    MS_OK(cm_array_create(d, 32, 32, CM_FORMAT_F32X4, CM_ARRAY_SURFACE_LOAD_STORE, &rw));
    cm_surface_t *sf = NULL;
    MS_FAIL_HINT(cm_surface_create(plain, &sf), CM_ERROR_INVALID_ARGUMENT,
                 "the CUDA array (32 x 32 CM_FORMAT_F32X4) was created without "
                 "CM_ARRAY_SURFACE_LOAD_STORE", "CM_ARRAY_SURFACE_LOAD_STORE");
    assert_null(sf);
    MS_OK(cm_surface_create(rw, &sf));
    unsigned long long obj = 0;
    MS_OK(cm_surface_object(sf, &obj));
    assert_true(obj != 0);
    /* a texture and a surface over one array */
    cm_texture_t *t = NULL;
    MS_OK(cm_texture_create_from_array(rw, NULL, &t));
    MS_OK(cm_texture_destroy(t));
    MS_FAIL_HINT(cm_array_destroy(rw), CM_ERROR_BUSY,
                 "arr (a cm_array_t) is read by surface #", "cm_surface_destroy()");
    assert_non_null(strstr(cm_last_error()->message, "over CUDA array #"));
    MS_FAIL(cm_device_close(d), CM_ERROR_BUSY, "surface over CUDA array");
    MS_OK(cm_surface_destroy(sf));
    MS_FAIL(cm_surface_destroy(sf), CM_ERROR_INVALID_ARGUMENT,
            "surf was already destroyed: it was a surface (cm_surface_t)");
    MS_FAIL(cm_surface_object(sf, &obj), CM_ERROR_INVALID_ARGUMENT, "already destroyed");
    MS_FAIL(cm_surface_create(rw, NULL), CM_ERROR_INVALID_ARGUMENT, "out is NULL");
    MS_FAIL(cm_surface_create((const cm_array_t *)(const void *)d, &sf), CM_ERROR_INVALID_ARGUMENT,
            "arr is a cm_device_t, not a cm_array_t");
    MS_OK(cm_surface_destroy(NULL));
    MS_OK(cm_array_destroy(rw));
    MS_OK(cm_array_destroy(plain));
    MS_OK(cm_device_close(d));
}

/* ---------------------------------------------------------------- failures */

static void test_texture_failures_leak_nothing(void **state) {
    (void)state;
    cm_device_t *d = ms_open(0);
    cm_pitched_t *p = NULL;
    MS_OK(cm_pitched_create(d, 64, 64, CM_FORMAT_F16X2, &p));
    cm_texture_t *t = NULL;
    cmf_arm(cmf_member_index("create_texture_object"), 0, 1, cudaErrorInvalidValue);
    MS_FAIL(cm_texture_create_from_pitched(p, NULL, &t), CM_ERROR_INVALID_ARGUMENT, NULL);
    (void)cmf_disarm();
    assert_non_null(strstr(cm_last_error()->call, "cudaCreateTextureObject(over a pitched buffer)"));
    assert_null(t);
    MS_OK(cm_pitched_destroy(p)); /* no texture was left over it */
    /* a failed scope: nothing created */
    MS_OK(cm_pitched_create(d, 64, 64, CM_FORMAT_F16X2, &p));
    cmf_arm(cmf_member_index("ctx_push_current"), 0, 1, cudaErrorUnknown);
    MS_FAIL(cm_texture_create_from_pitched(p, NULL, &t), CM_ERROR_CUDA, NULL);
    (void)cmf_disarm();
    assert_null(t);
    MS_OK(cm_texture_create_from_pitched(p, NULL, &t));
    /* a destroy whose scope cannot be entered leaves the texture alive, to be destroyed again */
    cmf_arm(cmf_member_index("ctx_push_current"), 0, 1, cudaErrorUnknown);
    MS_FAIL(cm_texture_destroy(t), CM_ERROR_CUDA, NULL);
    (void)cmf_disarm();
    MS_FAIL(cm_pitched_destroy(p), CM_ERROR_BUSY, "is read by texture");
    MS_OK(cm_texture_destroy(t));
    MS_OK(cm_pitched_destroy(p));
    MS_OK(cm_device_close(d));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rules_defaults_pass),
        cmocka_unit_test(test_rules_enums),
        cmocka_unit_test(test_rules_formats_and_filtering),
        cmocka_unit_test(test_rules_addressing),
        cmocka_unit_test(test_rules_linear_buffer),
        cmocka_unit_test(test_rules_limits),
        cmocka_unit_test_setup_teardown(test_texture_over_array, ms_setup, ms_teardown),
        cmocka_unit_test_setup_teardown(test_texture_over_array_limits_and_format, ms_setup,
                                        ms_teardown),
        cmocka_unit_test_setup_teardown(test_texture_over_buffer, ms_setup, ms_teardown),
        cmocka_unit_test_setup_teardown(test_texture_over_pitched, ms_setup, ms_teardown),
        cmocka_unit_test_setup_teardown(test_surfaces, ms_setup, ms_teardown),
        cmocka_unit_test_setup_teardown(test_texture_failures_leak_nothing, ms_setup, ms_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
