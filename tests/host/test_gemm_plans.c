/*
 * cm_gemm_explain() over bench_gemm's sweep (bench/gemm_sweep_shapes.h: 49 shapes) on simulated
 * devices, without a GPU: every precision, every (op_a, op_b), column-major and packed, on an
 * H200 (9.0, 132 multiprocessors), an A100 (8.0, 108) and a T4 (7.5, 40). Each plan must be
 * given (CM_OK, a text of its own length), start with the name of a kernel configuration the
 * library knows (cm__gemm_parse_name), name the simulated device at its end, split K into 2 to
 * CM__SPLITK_MAX parts where it splits, and take the last wave's split only where its rule
 * allows it (FP32 on a 128 x 128 FFMA tile). The same plans come from cm__gemm_select and
 * cm__gemm_splitk_parts that cm_gemm runs, so this is the dispatch's map of the sweep.
 *
 * With CM_GEMM_PLANS=1 in the environment the test also prints one line per case,
 *   PLAN <cc> <sms> <precision>_<m>x<n>x<k>_<ops> <configuration> parts <P> [wave] [copy]
 *        [align1]
 * (copy: an operand is copied or transposed into scratch first; align1: the TF32 mma.sync
 * tiles' align1 form reads the operands as they are)
 * so that a change to the dispatch or to split-K can be compared on the host against the
 * previous commit's lines (diff) before it goes to the GPU. CM_GEMM_PLANS_SHAPES="MxNxK ..."
 * prints the same lines for those shapes too (H200 only; operands of at most 4 GiB), as strided
 * batches of CM_GEMM_PLANS_BATCH packed products where that is set (2 .. 1024; the lines then
 * end with "batch B").
 */
#define _POSIX_C_SOURCE 200809L

#include "cm_test.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cudamodel/buffer.h>
#include <cudamodel/device.h>
#include <cudamodel/kernels.h>

#include "gemm.h"
#include "gemm_internal.h"
#include "test_stream_fake.h" /* and test_buffer_fake.h */
#include "../../bench/gemm_sweep_shapes.h"

/* The largest operand of the sweep: 4096 x 4096 floats, and a little room */
#define BUF_BYTES ((size_t)4096 * 4096 * 4 + 4096)

static struct {
    cm_device_t *dev;
    cm_buffer_t *a, *b, *c;
} g;

/* The dispatch's own choice on a simulated device of compute capability major.minor with sms
 * multiprocessors (0, 0, 0: the fake's own again) */
static void sim_device(int major, int minor, int sms) {
    fake.cc_major = major;
    fake.cc_minor = minor;
    fake.sm_count = sms;
    cm__gemm_device_facts_forget_for_tests();
    cm__gemm_config_override_set_for_tests("");
    cm__gemm_splitk_override_set_for_tests(-1);
}

static const cm_gemm_precision_t k_precs[] = {CM_GEMM_FP32, CM_GEMM_TF32, CM_GEMM_BF16,
                                              CM_GEMM_BF16_OUT_BF16, CM_GEMM_FP32_3XTF32};
#define N_PRECS (sizeof k_precs / sizeof k_precs[0])

/* The next "MxNxK" of a CM_GEMM_PLANS_SHAPES list at *s (separated by spaces or commas), *s
 * moved past it: 1, 0 at the list's end, -1 where the text there is not a shape of sides >= 1 */
static int next_shape(const char **s, size_t *m, size_t *n, size_t *k) {
    int used = 0;
    while (**s == ' ' || **s == ',') ++*s;
    if (**s == '\0') return 0;
    if (sscanf(*s, "%zux%zux%zu%n", m, n, k, &used) != 3 || *m == 0 || *n == 0 || *k == 0)
        return -1;
    *s += used;
    return 1;
}

/* CM_GEMM_PLANS_BATCH: the batch of CM_GEMM_PLANS_SHAPES' products (1 where unset or not 2 ..
 * 1024) */
static size_t extra_batch(void) {
    const char *e = getenv("CM_GEMM_PLANS_BATCH");
    const long b = e != NULL ? strtol(e, NULL, 10) : 1;
    return b >= 2 && b <= 1024 ? (size_t)b : 1;
}

/* The bytes of the largest operand of CM_GEMM_PLANS_SHAPES' shapes (floats, times
 * extra_batch()), at least BUF_BYTES */
static size_t extra_bytes(void) {
    size_t most = BUF_BYTES, m, n, k;
    const char *s = getenv("CM_GEMM_PLANS_SHAPES");
    while (s != NULL && next_shape(&s, &m, &n, &k) == 1) {
        const size_t ak = m * k, bk = k * n, cn = m * n;
        const size_t big =
            (ak > bk ? (ak > cn ? ak : cn) : (bk > cn ? bk : cn)) * 4 * extra_batch() + 4096;
        if (big > most && big <= ((size_t)1 << 32)) most = big;
    }
    return most;
}

static int setup(void **state) {
    (void)state;
    xfake_install(1);
    memset(&g, 0, sizeof g);
    if (cm_device_open(0, &g.dev)) return -1;
    const size_t bytes = extra_bytes();
    if (cm_buffer_create(g.dev, bytes, &g.a) || cm_buffer_create(g.dev, bytes, &g.b) ||
        cm_buffer_create(g.dev, bytes, &g.c))
        return -1;
    return 0;
}

static int teardown(void **state) {
    (void)state;
    int bad = cm_buffer_destroy(g.a) | cm_buffer_destroy(g.b) | cm_buffer_destroy(g.c);
    bad |= cm_device_close(g.dev);
    int left = fake_outstanding(), violations = fake.violations;
    sim_device(0, 0, 0);
    xfake_uninstall();
    return (bad || left || violations) ? -1 : 0;
}

static const char *prec_tag(cm_gemm_precision_t p) {
    switch (p) {
    case CM_GEMM_FP32: return "fp32";
    case CM_GEMM_TF32: return "tf32";
    case CM_GEMM_BF16: return "bf16";
    case CM_GEMM_BF16_OUT_BF16: return "bf16o";
    case CM_GEMM_FP32_3XTF32: return "3xtf32";
    }
    return "?";
}

/* One case's plan, checked; *wave: whether it took the last wave's split */
static void check_plan(int major, int minor, int sms, cm_gemm_precision_t prec, size_t m,
                       size_t n, size_t k, size_t nb, cm_gemm_op_t op_a, cm_gemm_op_t op_b,
                       int print, int *wave) {
    char text[4096], name[64], tail[96];
    const char *ops[2] = {"N", "T"};
    char what[128];
    snprintf(what, sizeof what, "%d.%d/%d %s %zux%zux%zu %s%s", major, minor, sms, prec_tag(prec),
             m, n, k, ops[op_a == CM_GEMM_OP_T], ops[op_b == CM_GEMM_OP_T]);
    /* packed column-major: op(A) m x k, op(B) k x n */
    const size_t lda = op_a == CM_GEMM_OP_N ? m : k, ldb = op_b == CM_GEMM_OP_N ? k : n;
    /* nb packed products one after the other (strides 0 for one) */
    const size_t sa = nb > 1 ? m * k : 0, sb = nb > 1 ? k * n : 0, sc = nb > 1 ? m * n : 0;
    size_t len = 0;
    memset(text, 0, sizeof text);
    const cm_status_t st = cm_gemm_explain(prec, CM_GEMM_COL_MAJOR, op_a, op_b, m, n, k, g.a, 0,
                                           lda, sa, g.b, 0, ldb, sb, g.c, 0, m, sc, nb, text,
                                           sizeof text, &len);
    if (st != CM_OK) fail_msg("%s: cm_gemm_explain returned %d", what, (int)st);
    if (len == 0 || len != strlen(text) || len >= sizeof text)
        fail_msg("%s: a text of length %zu (strlen %zu)", what, len, strlen(text));
    /* "<configuration>: ..." */
    const char *colon = strstr(text, ": ");
    if (colon == NULL || (size_t)(colon - text) >= sizeof name)
        fail_msg("%s: no configuration name in: %s", what, text);
    memcpy(name, text, (size_t)(colon - text));
    name[colon - text] = '\0';
    cm__gemm_choice_t ch;
    if (!cm__gemm_parse_name(name, &ch)) fail_msg("%s: unknown configuration \"%s\"", what, name);
    /* "... [compute capability 9.0, 132 multiprocessors]" */
    snprintf(tail, sizeof tail, "[compute capability %d.%d, %d multiprocessors]", major, minor,
             sms);
    if (len < strlen(tail) || strcmp(text + len - strlen(tail), tail) != 0)
        fail_msg("%s: the text does not end with \"%s\": %s", what, tail, text);
    /* "K = 3001 is split into 8 parts of ..." */
    int parts = 1;
    const char *sp = strstr(text, " is split into ");
    if (sp != NULL) {
        parts = atoi(sp + strlen(" is split into "));
        if (parts < 2 || parts > CM__SPLITK_MAX)
            fail_msg("%s: K split into %d parts: %s", what, parts, text);
        if (prec == CM_GEMM_FP32_3XTF32 && ch.kernel == CM__GEMM_KERNEL_SM90)
            fail_msg("%s: 3xTF32's Hopper kernel split over K: %s", what, text);
    }
    /* 3xTF32 on any kernel but its Hopper one runs as FP32 (cm__gemm_run_precision): FP32's
     * plan word for word, then why (before the device's facts) */
    const int x3_as_fp32 = prec == CM_GEMM_FP32_3XTF32 && ch.kernel != CM__GEMM_KERNEL_SM90;
    if (x3_as_fp32) {
        char fp32[4096], x3[4096];
        size_t flen = 0;
        memset(fp32, 0, sizeof fp32);
        const char *why = strstr(text, "; CM_GEMM_FP32_3XTF32 runs this on the FP32 kernels");
        const char *facts = strstr(text, " [compute capability");
        if (k == 0) /* no product: nothing to say of its kernels */
            snprintf(x3, sizeof x3, "%s", text);
        else if (why == NULL || facts == NULL || facts < why)
            fail_msg("%s: 3xTF32 off its Hopper kernel does not say why: %s", what, text);
        else
            snprintf(x3, sizeof x3, "%.*s%s", (int)(why - text), text, facts);
        if (cm_gemm_explain(CM_GEMM_FP32, CM_GEMM_COL_MAJOR, op_a, op_b, m, n, k, g.a, 0, lda,
                            sa, g.b, 0, ldb, sb, g.c, 0, m, sc, nb, fp32, sizeof fp32,
                            &flen) != CM_OK ||
            strcmp(fp32, x3) != 0)
            fail_msg("%s: 3xTF32 off its Hopper kernel plans\n  %s\nFP32 plans\n  %s", what,
                     text, fp32);
    }
    /* the last wave's split: "C's leading 2816 rows (528 tiles) run as whole waves of ..." */
    *wave = strstr(text, "run as whole waves") != NULL;
    if (*wave) {
        int bm = 0, bn = 0;
        if (ch.kernel == CM__GEMM_KERNEL_FFMA) cm__gemm_ffma_tile(ch.config, &bm, &bn);
        if ((prec != CM_GEMM_FP32 && !x3_as_fp32) || bm < 128 || bn < 128 ||
            k < CM__WAVE_SPLIT_MIN_K ||
            sp != NULL)
            fail_msg("%s: the last wave's split where its rule excludes it: %s", what, text);
    }
    /* operands copied first (the realignment, the FP32 pitched copy, the Hopper pre-passes:
     * "first ... is copied / transposed"), or read as they are by the TF32 align1 form */
    const int copied = strstr(text, "; first ") != NULL;
    const int align1 = strstr(text, "align1 form") != NULL;
    char batch[32] = "";
    if (nb > 1) snprintf(batch, sizeof batch, " batch %zu", nb);
    if (print)
        printf("PLAN %d.%d %d %s_%zux%zux%zu_%s%s %s parts %d%s%s%s%s\n", major, minor, sms,
               prec_tag(prec), m, n, k, ops[op_a == CM_GEMM_OP_T], ops[op_b == CM_GEMM_OP_T],
               name, parts, *wave ? " wave" : "", copied ? " copy" : "",
               align1 ? " align1" : "", batch);
    /* CM_GEMM_PLANS_TEXT=1: cm_gemm_explain's whole text under each PLAN line */
    const char *tx = getenv("CM_GEMM_PLANS_TEXT");
    if (print && tx != NULL && strcmp(tx, "1") == 0) printf("  %s\n", text);
}

/* check_plan over the four (op_a, op_b) of one shape, batch and precision; the number of plans
 * that took the last wave's split */
static int check_ops(int major, int minor, int sms, cm_gemm_precision_t prec, size_t m, size_t n,
                     size_t k, size_t nb, int print) {
    int waves = 0;
    for (int o = 0; o < 4; ++o) {
        int wave = 0;
        check_plan(major, minor, sms, prec, m, n, k, nb, (cm_gemm_op_t)(o & 1),
                   (cm_gemm_op_t)(o >> 1), print, &wave);
        waves += wave;
    }
    return waves;
}

static void test_sweep_plans(void **state) {
    (void)state;
    static const struct {
        int major, minor, sms;
    } devs[] = {{9, 0, 132}, {8, 0, 108}, {7, 5, 40}};
    const char *env = getenv("CM_GEMM_PLANS");
    const int print = env != NULL && strcmp(env, "1") == 0;
    int cases = 0, waves_h200 = 0;
    for (size_t d = 0; d < sizeof devs / sizeof devs[0]; ++d) {
        sim_device(devs[d].major, devs[d].minor, devs[d].sms);
        for (size_t p = 0; p < N_PRECS; ++p)
            for (size_t i = 0; i < N_SWEEP; ++i) {
                const int waves = check_ops(devs[d].major, devs[d].minor, devs[d].sms,
                                            k_precs[p], k_sweep[i].m, k_sweep[i].n,
                                            k_sweep[i].k, 1, print);
                cases += 4;
                if (d == 0) waves_h200 += waves;
            }
    }
    assert_int_equal(cases, 3 * 5 * (int)N_SWEEP * 4);
    /* the sweep's 3001^3 FP32 takes the last wave's split on an H200 (2 waves of 264 and 48
     * tiles) in each of the four orientations: the check above saw it */
    if (waves_h200 < 4)
        fail_msg("%d FP32 cases took the last wave's split on 132 SMs", waves_h200);
}

/* One column-major product's plan on a simulated H200 into text (CM_OK asserted) */
static void plan_text(cm_gemm_precision_t prec, cm_gemm_op_t op_a, cm_gemm_op_t op_b, size_t m,
                      size_t n, size_t k, size_t lda, size_t ldb, char *text, size_t cap) {
    size_t len = 0;
    memset(text, 0, cap);
    CM_ASSERT_OK(cm_gemm_explain(prec, CM_GEMM_COL_MAJOR, op_a, op_b, m, n, k, g.a, 0, lda, 0,
                                 g.b, 0, ldb, 0, g.c, 0, m, 0, 1, text, cap, &len));
}

/* The plans' reasons for staging rows of an odd number of 16 bytes on an H200: TF32 "TN" 4096 x
 * 4096 x 3004 copies both operands into rows of whole 128-byte lines, 3000 (rows of a multiple
 * of 32 bytes) reads them as they are; bf16 "NN" 1000 x 4096 x 4096 transposes A (rows of 2000
 * bytes) instead of reading it with the transposed-B form. A build without the Hopper kernel
 * plans another kernel, and says nothing of it. */
static void test_stage32_text(void **state) {
    (void)state;
    sim_device(9, 0, 132);
    char text[4096];
    plan_text(CM_GEMM_TF32, CM_GEMM_OP_T, CM_GEMM_OP_N, 4096, 4096, 3004, 3004, 3004, text,
              sizeof text);
    if (strncmp(text, "sm90", 4) == 0) {
        if (strncmp(text, "sm90+pack", 9) != 0 ||
            strstr(text, "its rows of 12016 bytes are an odd number of 16 bytes") == NULL)
            fail_msg("TF32 4096 x 4096 x 3004 TN: %s", text);
        plan_text(CM_GEMM_TF32, CM_GEMM_OP_T, CM_GEMM_OP_N, 4096, 4096, 3000, 3000, 3000, text,
                  sizeof text);
        if (strncmp(text, "sm90:", 5) != 0 || strstr(text, "odd number") != NULL)
            fail_msg("TF32 4096 x 4096 x 3000 TN: %s", text);
        plan_text(CM_GEMM_BF16, CM_GEMM_OP_N, CM_GEMM_OP_N, 1000, 4096, 4096, 1000, 4096, text,
                  sizeof text);
        if (strncmp(text, "sm90+pack", 9) != 0 ||
            strstr(text, "its rows of 2000 bytes are an odd number of 16 bytes") == NULL)
            fail_msg("bf16 1000 x 4096 x 4096 NN: %s", text);
    }
    sim_device(0, 0, 0);
}

/* CM_GEMM_PLANS_SHAPES="MxNxK ...": the PLAN lines of those shapes on a simulated H200, every
 * precision and orientation, checked as the sweep's are (no shape: nothing to do); with
 * CM_GEMM_PLANS_TEXT=1 each with cm_gemm_explain's text */
static void test_extra_plans(void **state) {
    (void)state;
    const char *s = getenv("CM_GEMM_PLANS_SHAPES");
    if (s == NULL) return;
    sim_device(9, 0, 132);
    size_t m, n, k;
    int got;
    const size_t nb = extra_batch();
    while ((got = next_shape(&s, &m, &n, &k)) == 1)
        for (size_t p = 0; p < N_PRECS; ++p)
            (void)check_ops(9, 0, 132, k_precs[p], m, n, k, nb, 1);
    if (got < 0) fail_msg("CM_GEMM_PLANS_SHAPES: not MxNxK at \"%s\"", s);
    sim_device(0, 0, 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_extra_plans, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sweep_plans, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stage32_text, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
