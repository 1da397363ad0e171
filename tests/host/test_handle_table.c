/*
 * The generational handle table (src/core/handle.h), directly and through the public API.
 *
 * Directly: a handle is a value whose top byte is its kind; it decodes to its object while
 * live and to nothing once ended; every later use is reported as a stale handle of its kind
 * (CM_ERROR_INVALID_ARGUMENT naming the kind), forever, also after its slot was reused; a value
 * of one kind passed as another, NULL and pointers that never came from the table are told
 * apart; a slot whose generation is exhausted is retired, never handed out again. Stress:
 * 10^6 creates and ends of every kind in random order with up to 3000 live, every stale value
 * checked, none ever decoding to a live object and no value ever issued twice.
 *
 * Through the public API (fault injection: the simulated device of test_stream_fake.h, two
 * devices): 10^5 random creates, destroys and uses of buffers, host buffers, streams, events
 * and timers across device close / reopen cycles; every use of a stale handle is refused with
 * the kind's name and never acts on a live object.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cudamodel/buffer.h>
#include <cudamodel/device.h>
#include <cudamodel/interop.h>
#include <cudamodel/status.h>
#include <cudamodel/stream.h>

#include "handle.h"
#include "lock.h"
#include "test_stream_fake.h"

#define INV CM_ERROR_INVALID_ARGUMENT

/* The names the messages use for each kind (handle.h: "buffer", "stream", "device object"...). */
static const char *const kind_word[CM__KIND_COUNT] = {
    [CM__KIND_DEVICE] = "device object", [CM__KIND_BUFFER] = "buffer",
    [CM__KIND_HOST_BUFFER] = "host buffer", [CM__KIND_STREAM] = "stream",
    [CM__KIND_EVENT] = "event",          [CM__KIND_TIMER] = "timer",
    [CM__KIND_GRAPH] = "graph",          [CM__KIND_DEVICE_SET] = "device set",
    [CM__KIND_SPLIT] = "split",          [CM__KIND_COMM] = "communicator",
    [CM__KIND_PITCHED] = "pitched buffer", [CM__KIND_ARRAY] = "CUDA array",
    [CM__KIND_TEXTURE] = "texture",      [CM__KIND_SURFACE] = "surface",
    [CM__KIND_MANAGED] = "managed buffer",
};

static uint32_t gen_of(const void *h) {
    return (uint32_t)((uintptr_t)h >> 32) & CM__H_GEN_MAX;
}

/* How the messages tell the cases apart: a stale handle "was already destroyed / released /
 * closed"; a value that never was a handle "never came from" the library. */
#define STALE_WORD "already"
#define NEVER_WORD "never"

/* The last failure is CM_ERROR_INVALID_ARGUMENT for a stale handle of kind: the message names
 * the kind and calls it stale, not "never a handle"; a hint is there. */
#define EXPECT_STALE_MSG(kind) expect_stale_msg((kind), __FILE__, __LINE__)
static void expect_stale_msg(cm__kind_t kind, const char *file, int line) {
    const cm_error_t *e = cm_last_error();
    const char *name = cm__kind_name(kind);
    if (e->status != INV || strstr(e->message, name) == NULL ||
        strstr(e->message, STALE_WORD) == NULL || strstr(e->message, NEVER_WORD) != NULL ||
        e->hint[0] == '\0' ||
        (kind == CM__KIND_BUFFER && strstr(e->message, "host buffer") != NULL)) {
        print_error("stale %s: status %d, message \"%s\", hint \"%s\"\n", name, (int)e->status,
                    e->message, e->hint);
        _fail(file, line);
    }
}

/* h decodes to nothing under every kind (a stale or foreign value). */
#define EXPECT_DECODES_TO_NOTHING(h) expect_nothing((h), __FILE__, __LINE__)
static void expect_nothing(const void *h, const char *file, int line) {
    for (int k = 0; k < CM__KIND_COUNT + 2; ++k) {
        if (cm__handle_obj(h, (cm__kind_t)k) != NULL) {
            print_error("value %p decodes to an object as kind %d\n", h, k);
            _fail(file, line);
        }
    }
}

/* ---------------------------------------------------------------- the table, directly */

static void test_kind_names(void **state) {
    (void)state;
    for (int k = CM__KIND_DEVICE; k < CM__KIND_COUNT; ++k) {
        const char *n = cm__kind_name((cm__kind_t)k);
        assert_non_null(n);
        assert_non_null(strstr(n, kind_word[k]));
        for (int j = CM__KIND_DEVICE; j < k; ++j) assert_string_not_equal(n, cm__kind_name((cm__kind_t)j));
    }
    assert_non_null(cm__kind_name(CM__KIND_NONE));
    assert_non_null(cm__kind_name((cm__kind_t)200)); /* out of range: still a string */
}

static void test_new_obj_end(void **state) {
    (void)state;
    int objs[CM__KIND_COUNT];
    void *h[CM__KIND_COUNT];
    size_t before[CM__KIND_COUNT];
    for (int k = CM__KIND_DEVICE; k < CM__KIND_COUNT; ++k) before[k] = cm__handle_live_count((cm__kind_t)k);
    for (int k = CM__KIND_DEVICE; k < CM__KIND_COUNT; ++k) {
        cm__epitaph_t ep = {.file = __FILE__, .line = __LINE__, .device = -1};
        h[k] = cm__handle_new((cm__kind_t)k, &objs[k], &ep);
        assert_non_null(h[k]);
        /* a value, never a user-space pointer: the kind is in the top byte */
        assert_int_equal((uintptr_t)h[k] >> 56, (uintptr_t)k);
        assert_int_equal(cm__h_kind(h[k]), k);
        assert_true(gen_of(h[k]) >= 1);
        assert_int_equal(cm__handle_live_count((cm__kind_t)k), before[k] + 1);
    }
    for (int k = CM__KIND_DEVICE; k < CM__KIND_COUNT; ++k) {
        for (int j = 0; j < CM__KIND_COUNT; ++j)
            assert_ptr_equal(cm__handle_obj(h[k], (cm__kind_t)j), j == k ? (void *)&objs[k] : NULL);
        void *o = NULL;
        CM_ASSERT_OK(cm__handle_get(h[k], (cm__kind_t)k, "h", __func__, &o));
        assert_ptr_equal(o, &objs[k]);
        for (int j = k + 1; j < CM__KIND_COUNT; ++j) assert_ptr_not_equal(h[k], h[j]);
    }
    /* ending under another kind changes nothing */
    assert_null(cm__handle_end(h[CM__KIND_BUFFER], CM__KIND_HOST_BUFFER));
    assert_ptr_equal(cm__handle_obj(h[CM__KIND_BUFFER], CM__KIND_BUFFER), &objs[CM__KIND_BUFFER]);
    for (int k = CM__KIND_DEVICE; k < CM__KIND_COUNT; ++k) {
        assert_ptr_equal(cm__handle_end(h[k], (cm__kind_t)k), &objs[k]);
        EXPECT_DECODES_TO_NOTHING(h[k]);
        assert_null(cm__handle_end(h[k], (cm__kind_t)k)); /* double end: nothing */
        assert_int_equal(cm__handle_live_count((cm__kind_t)k), before[k]);
    }
    /* the _locked forms under the core lock (which the tests' probe sees taken, then free) */
    int x = 0;
    assert_int_equal(cm__core_lock_held_for_tests(), 0);
    cm__core_lock();
    assert_int_equal(cm__core_lock_held_for_tests(), 1);
    void *hl = cm__handle_new_locked(CM__KIND_GRAPH, &x, NULL);
    cm__core_unlock();
    assert_non_null(hl);
    assert_ptr_equal(cm__handle_obj(hl, CM__KIND_GRAPH), &x);
    cm__core_lock();
    void *ol = cm__handle_end_locked(hl, CM__KIND_GRAPH);
    cm__core_unlock();
    assert_int_equal(cm__core_lock_held_for_tests(), 0);
    assert_ptr_equal(ol, &x);
    assert_null(cm__handle_obj(hl, CM__KIND_GRAPH));
    /* no object, no kind: no handle */
    assert_null(cm__handle_new(CM__KIND_BUFFER, NULL, NULL));
    assert_null(cm__handle_new(CM__KIND_NONE, &x, NULL));
    assert_null(cm__handle_new(CM__KIND_COUNT, &x, NULL));
    assert_null(cm__handle_new((cm__kind_t)0x7f, &x, NULL));
    for (int k = CM__KIND_DEVICE; k < CM__KIND_COUNT; ++k)
        assert_int_equal(cm__handle_live_count((cm__kind_t)k), before[k]);
}

static void test_stale_reported_with_its_kind_forever(void **state) {
    (void)state;
    for (int k = CM__KIND_DEVICE; k < CM__KIND_COUNT; ++k) {
        int obj = 0;
        cm__epitaph_t ep = {.file = "made_here.c", .line = 321, .device = 1, .bytes = 4096};
        void *h = cm__handle_new((cm__kind_t)k, &obj, &ep);
        assert_non_null(h);
        assert_ptr_equal(cm__handle_end(h, (cm__kind_t)k), &obj);
        cm_last_error_clear();
        assert_int_equal(cm__handle_fail(h, (cm__kind_t)k, "the_arg", "the_func"), INV);
        EXPECT_STALE_MSG((cm__kind_t)k);
        const cm_error_t *e = cm_last_error();
        assert_non_null(strstr(e->message, "the_arg"));
        /* while the slot is not reused, the report says where the object came from */
        assert_non_null(strstr(e->message, "made_here.c:321"));
        if (k == CM__KIND_BUFFER) assert_non_null(strstr(e->message, "4096"));
        /* CM__GET form */
        void *o = (void *)&obj;
        assert_int_equal(cm__handle_get(h, (cm__kind_t)k, "h", __func__, &o), INV);
        assert_null(o);
        EXPECT_STALE_MSG((cm__kind_t)k);

        /* reuse every slot many times over with handles of every kind: the old value is still
         * reported as a stale handle of its kind and never decodes to the new objects */
        int other = 0;
        for (int i = 0; i < 20000; ++i) {
            void *n = cm__handle_new((cm__kind_t)(CM__KIND_DEVICE + i % (CM__KIND_COUNT - 1)), &other, NULL);
            assert_non_null(n);
            assert_ptr_not_equal(n, h);
            EXPECT_DECODES_TO_NOTHING(h);
            assert_non_null(cm__handle_end(n, cm__h_kind(n)));
        }
        assert_int_equal(cm__handle_fail(h, (cm__kind_t)k, "the_arg", "the_func"), INV);
        EXPECT_STALE_MSG((cm__kind_t)k);
        EXPECT_DECODES_TO_NOTHING(h);
    }
}

static void test_value_of_another_kind(void **state) {
    (void)state;
    int obj = 0;
    void *b = cm__handle_new(CM__KIND_BUFFER, &obj, NULL);
    assert_non_null(b);
    /* live buffer passed as a stream */
    assert_null(cm__handle_obj(b, CM__KIND_STREAM));
    assert_int_equal(cm__handle_fail(b, CM__KIND_STREAM, "stream", "f"), INV);
    const cm_error_t *e = cm_last_error();
    assert_non_null(strstr(e->message, "buffer"));
    assert_non_null(strstr(e->message, "stream"));
    assert_null(strstr(e->message, NEVER_WORD));
    assert_null(strstr(e->message, STALE_WORD)); /* it is live: not called stale */
    assert_true(e->hint[0] != '\0');
    /* the object is untouched by the failed lookups */
    assert_ptr_equal(cm__handle_obj(b, CM__KIND_BUFFER), &obj);
    /* a stale buffer passed as an event: named as a buffer, and the event as what is expected */
    assert_ptr_equal(cm__handle_end(b, CM__KIND_BUFFER), &obj);
    assert_int_equal(cm__handle_fail(b, CM__KIND_EVENT, "event", "f"), INV);
    e = cm_last_error();
    assert_non_null(strstr(e->message, "buffer"));
    assert_non_null(strstr(e->message, "event"));
    assert_non_null(strstr(e->message, STALE_WORD));
    assert_null(strstr(e->message, NEVER_WORD));
    /* a live host buffer passed as a buffer and the reverse */
    void *hb = cm__handle_new(CM__KIND_HOST_BUFFER, &obj, NULL);
    assert_null(cm__handle_obj(hb, CM__KIND_BUFFER));
    assert_int_equal(cm__handle_fail(hb, CM__KIND_BUFFER, "buf", "f"), INV);
    assert_true(strstr(cm_last_error()->message, "host buffer") != NULL ||
                strstr(cm_last_error()->message, "host_buffer") != NULL);
    assert_ptr_equal(cm__handle_end(hb, CM__KIND_HOST_BUFFER), &obj);
}

static void test_null_and_garbage_are_not_handles(void **state) {
    (void)state;
    int local = 0;
    void *heap = malloc(64);
    assert_non_null(heap);
    void *live = cm__handle_new(CM__KIND_TIMER, &local, NULL);
    assert_non_null(live);
    uint32_t live_index = cm__h_index(live);
    const void *garbage[] = {
        (const void *)&local,                                  /* a stack address */
        heap,                                                  /* a heap address */
        (const void *)(uintptr_t)&test_null_and_garbage_are_not_handles, /* code */
        (const void *)(uintptr_t)1,
        (const void *)(uintptr_t)0xffffffffffffffffull,        /* kernel half, top bit set */
        (const void *)(uintptr_t)0xffff800000001000ull,
        (const void *)(uintptr_t)((uint64_t)CM__KIND_BUFFER << 56 | 0xfffffff0u), /* past table */
        (const void *)(uintptr_t)((uint64_t)0x7f << 56 | live_index),             /* bad kind */
        (const void *)(uintptr_t)((uint64_t)CM__KIND_COUNT << 56 | live_index),
        (const void *)(uintptr_t)(uint64_t)live_index,                           /* kind 0 */
    };
    for (size_t i = 0; i < sizeof garbage / sizeof garbage[0]; ++i) {
        EXPECT_DECODES_TO_NOTHING(garbage[i]);
        for (int k = CM__KIND_DEVICE; k < CM__KIND_COUNT; ++k) {
            void *o = (void *)&local;
            assert_int_equal(cm__handle_get(garbage[i], (cm__kind_t)k, "arg", "f", &o), INV);
            assert_null(o);
            const cm_error_t *e = cm_last_error();
            if (strstr(e->message, NEVER_WORD) == NULL || strstr(e->message, STALE_WORD) != NULL) {
                print_error("value %zu (%p) as %s: \"%s\"\n", i, garbage[i], kind_word[k], e->message);
                fail();
            }
            assert_true(e->hint[0] != '\0');
        }
    }
    /* NULL */
    for (int k = CM__KIND_DEVICE; k < CM__KIND_COUNT; ++k) {
        assert_null(cm__handle_obj(NULL, (cm__kind_t)k));
        assert_int_equal(cm__handle_fail(NULL, (cm__kind_t)k, "my_arg", "f"), INV);
        assert_non_null(strstr(cm_last_error()->message, "my_arg"));
        assert_non_null(strstr(cm_last_error()->message, "NULL"));
        assert_true(cm_last_error()->hint[0] != '\0');
    }
    /* the live handle was not disturbed by any of it */
    assert_ptr_equal(cm__handle_obj(live, CM__KIND_TIMER), &local);
    assert_ptr_equal(cm__handle_end(live, CM__KIND_TIMER), &local);
    free(heap);
}

/* ---------------------------------------------------------------- stress */

#define STRESS_PER_KIND 1000000u
#define STRESS_MAX_LIVE 3000u
#define STALE_RING (1u << 20)

typedef struct tobj {
    void *h;
    cm__kind_t kind;
    uint64_t serial;
} tobj_t;

static void test_stress_million_per_kind(void **state) {
    (void)state;
    static tobj_t objs[STRESS_MAX_LIVE];
    static uint32_t live[STRESS_MAX_LIVE];   /* indices into objs */
    static uint32_t spare[STRESS_MAX_LIVE];  /* free indices of objs */
    uint32_t n_live = 0, n_spare = STRESS_MAX_LIVE;
    for (uint32_t i = 0; i < STRESS_MAX_LIVE; ++i) spare[i] = STRESS_MAX_LIVE - 1 - i;
    uint64_t *stale = calloc(STALE_RING, sizeof *stale);
    assert_non_null(stale);
    size_t n_stale = 0; /* ever ended (the ring keeps the last STALE_RING) */
    /* the highest generation issued per slot index: a new value must exceed it (no value is
     * ever issued twice, whatever its kind) */
    size_t gen_cap = 1u << 16;
    uint32_t *last_gen = calloc(gen_cap, sizeof *last_gen);
    assert_non_null(last_gen);

    size_t base[CM__KIND_COUNT], mine[CM__KIND_COUNT] = {0}, created[CM__KIND_COUNT] = {0};
    for (int k = 0; k < CM__KIND_COUNT; ++k) base[k] = cm__handle_live_count((cm__kind_t)k);
    uint64_t rng = 0x9e3779b97f4a7c15ull;
    uint32_t target = 0;
    uint64_t serial = 0, ops = 0;
    size_t retired0 = cm__handle_retired_count();

    for (;;) {
        int done = 1;
        for (int k = CM__KIND_DEVICE; k < CM__KIND_COUNT; ++k)
            if (created[k] < STRESS_PER_KIND) done = 0;
        if (done && n_live == 0) break;
        ++ops;
        if ((ops & 0xffffu) == 1) target = done ? 0 : (uint32_t)(cm_test_rand(&rng) % (STRESS_MAX_LIVE + 1));
        uint64_t r = cm_test_rand(&rng);
        int create = !done && n_live < STRESS_MAX_LIVE &&
                     (n_live == 0 || (n_live < target ? (r & 7) != 0 : (r & 7) == 0));
        if (create) {
            cm__kind_t kind = (cm__kind_t)(CM__KIND_DEVICE + (r >> 8) % (CM__KIND_COUNT - 1));
            uint32_t oi = spare[--n_spare];
            tobj_t *o = &objs[oi];
            cm__epitaph_t ep = {.file = __FILE__, .line = __LINE__, .device = (int)(r >> 40) % 3 - 1,
                                  .bytes = (r >> 20) & 0xffff};
            void *h = cm__handle_new(kind, o, &ep);
            if (h == NULL) fail_msg("handle_new failed after %llu operations", (unsigned long long)ops);
            if (cm__h_kind(h) != kind) fail_msg("kind %d encoded as %d", kind, cm__h_kind(h));
            uint32_t idx = cm__h_index(h);
            if (idx >= gen_cap) {
                size_t ncap = gen_cap;
                while (ncap <= idx) ncap *= 2;
                last_gen = realloc(last_gen, ncap * sizeof *last_gen);
                assert_non_null(last_gen);
                memset(last_gen + gen_cap, 0, (ncap - gen_cap) * sizeof *last_gen);
                gen_cap = ncap;
            }
            if (gen_of(h) <= last_gen[idx])
                fail_msg("slot %u issued generation %u after %u: a value could repeat", idx,
                         gen_of(h), last_gen[idx]);
            last_gen[idx] = gen_of(h);
            o->h = h;
            o->kind = kind;
            o->serial = ++serial;
            live[n_live++] = oi;
            ++mine[kind];
            ++created[kind];
        } else if (n_live > 0) {
            uint32_t li = (uint32_t)((r >> 8) % n_live);
            uint32_t oi = live[li];
            tobj_t *o = &objs[oi];
            /* live: decodes to its own object under its kind only */
            if (cm__handle_obj(o->h, o->kind) != o) fail_msg("live handle lost its object");
            if (cm__handle_obj(o->h, (cm__kind_t)(o->kind % (CM__KIND_COUNT - 1) + 1)) != NULL)
                fail_msg("live handle decodes under another kind");
            if (cm__handle_end(o->h, o->kind) != o) fail_msg("end did not return the object");
            void *h = o->h;
            --mine[o->kind];
            live[li] = live[--n_live];
            spare[n_spare++] = oi;
            o->h = NULL;
            stale[n_stale++ % STALE_RING] = (uint64_t)(uintptr_t)h;
            /* the value just ended and two older ones decode to nothing */
            if (cm__handle_obj(h, cm__h_kind(h)) != NULL) fail_msg("ended handle still decodes");
            size_t have = n_stale < STALE_RING ? n_stale : STALE_RING;
            const void *older = (const void *)(uintptr_t)stale[(r >> 32) % have];
            if (cm__handle_obj(older, cm__h_kind(older)) != NULL)
                fail_msg("stale value %p decodes to a live object", older);
            /* and is reported as stale with its kind (every 64th: a formatted message) */
            if ((r & 63) == 0) {
                if (cm__handle_end(h, cm__h_kind(h)) != NULL) fail_msg("double end succeeded");
                const void *old = (r & 64) ? h : (const void *)(uintptr_t)stale[(r >> 16) % have];
                cm__kind_t k = cm__h_kind(old);
                void *obj = NULL;
                if (cm__handle_get(old, k, "h", "stress", &obj) != INV || obj != NULL)
                    fail_msg("stale value not refused");
                EXPECT_STALE_MSG(k);
            }
        }
        /* now and then: every remembered stale value, and the live counts */
        if ((ops & 0xfffffu) == 0 || (done && n_live == 0)) {
            size_t have = n_stale < STALE_RING ? n_stale : STALE_RING;
            for (size_t i = 0; i < have; ++i) {
                const void *old = (const void *)(uintptr_t)stale[i];
                if (cm__handle_obj(old, cm__h_kind(old)) != NULL)
                    fail_msg("stale value %p decodes to a live object", old);
            }
            for (int k = CM__KIND_DEVICE; k < CM__KIND_COUNT; ++k)
                assert_int_equal(cm__handle_live_count((cm__kind_t)k), base[k] + mine[k]);
        }
    }
    /* the end state: every remembered stale value reported with its kind */
    size_t have = n_stale < STALE_RING ? n_stale : STALE_RING;
    for (size_t i = 0; i < have; i += 97) {
        const void *old = (const void *)(uintptr_t)stale[i];
        assert_int_equal(cm__handle_fail(old, cm__h_kind(old), "h", "stress"), INV);
        EXPECT_STALE_MSG(cm__h_kind(old));
    }
    for (int k = CM__KIND_DEVICE; k < CM__KIND_COUNT; ++k) {
        assert_true(created[k] >= STRESS_PER_KIND);
        assert_int_equal(cm__handle_live_count((cm__kind_t)k), base[k]);
    }
    /* 10^7 ends over a few thousand slots do not come near the generation limit */
    assert_int_equal(cm__handle_retired_count(), retired0);
    print_message("stress: %llu operations, %zu handles ended\n", (unsigned long long)ops, n_stale);
    free(stale);
    free(last_gen);
}

/* Generation exhaustion: a slot whose generation reaches the limit is retired: never handed
 * out again, its last value reported stale with its kind. Changes the table for the rest of
 * the process (every free slot is aged): runs last. */
static void test_generation_exhaustion_retires_slot(void **state) {
    (void)state;
    int obj = 0;
    size_t retired0 = cm__handle_retired_count();
    cm__handle_age_for_tests(CM__H_GEN_MAX - 1u);
    size_t cap = 1u << 16;
    unsigned char *retired = calloc(cap, 1);
    assert_non_null(retired);
    void *last_values[64];
    size_t n_retired = 0;
    for (int i = 0; i < 200000; ++i) {
        cm__kind_t kind = (cm__kind_t)(CM__KIND_DEVICE + i % (CM__KIND_COUNT - 1));
        void *h = cm__handle_new(kind, &obj, NULL);
        assert_non_null(h);
        uint32_t idx = cm__h_index(h);
        if (idx >= cap) {
            size_t ncap = cap;
            while (ncap <= idx) ncap *= 2;
            retired = realloc(retired, ncap);
            assert_non_null(retired);
            memset(retired + cap, 0, ncap - cap);
            cap = ncap;
        }
        if (retired[idx]) fail_msg("retired slot %u handed out again (generation %u)", idx, gen_of(h));
        assert_true(gen_of(h) >= CM__H_GEN_MAX - 1u);
        assert_ptr_equal(cm__handle_end(h, kind), &obj);
        if (gen_of(h) == CM__H_GEN_MAX) {
            retired[idx] = 1;
            ++n_retired;
            assert_int_equal(cm__handle_retired_count(), retired0 + n_retired);
            if (n_retired <= 64) last_values[n_retired - 1] = h;
        }
    }
    assert_true(n_retired >= 64);
    for (size_t i = 0; i < 64; ++i) {
        EXPECT_DECODES_TO_NOTHING(last_values[i]);
        assert_int_equal(cm__handle_fail(last_values[i], cm__h_kind(last_values[i]), "h", "f"), INV);
        EXPECT_STALE_MSG(cm__h_kind(last_values[i]));
    }
    cm__handle_age_for_tests(1u); /* new slots start low again */
    void *h = cm__handle_new(CM__KIND_BUFFER, &obj, NULL);
    assert_non_null(h);
    assert_ptr_equal(cm__handle_end(h, CM__KIND_BUFFER), &obj);
    free(retired);
}

/* ---------------------------------------------------------------- through the public API */

enum { P_BUF, P_HBUF, P_STREAM, P_EVENT, P_TIMER, P_NKINDS };
static const char *const p_word[P_NKINDS] = {"buffer", "host buffer", "stream", "event", "timer"};

typedef struct pobj {
    void *h;
    int kind;
    int dev;
    size_t bytes;
} pobj_t;

#define P_MAX_LIVE 96
#define P_STALE 2048
#define P_SEEN_BITS 20 /* open-addressing set of every handle value ever returned */

static uint64_t *p_seen;

/* Record a value returned by a create; fail if it was ever returned before. */
static void p_seen_add(const void *h) {
    uint64_t v = (uint64_t)(uintptr_t)h;
    assert_true(v != 0);
    size_t mask = ((size_t)1 << P_SEEN_BITS) - 1, i = (size_t)((v * 0x9e3779b97f4a7c15ull) >> 20) & mask;
    while (p_seen[i] != 0) {
        if (p_seen[i] == v) fail_msg("handle value %p returned twice: a stale copy aliases it", h);
        i = (i + 1) & mask;
    }
    p_seen[i] = v;
}

static void p_expect_stale(int kind, const char *what) {
    const cm_error_t *e = cm_last_error();
    if (e->status != INV || strstr(e->message, p_word[kind]) == NULL ||
        strstr(e->message, STALE_WORD) == NULL || strstr(e->message, NEVER_WORD) != NULL ||
        (kind == P_BUF && strstr(e->message, "host buffer") != NULL)) {
        fail_msg("%s on a stale %s: status %d, message \"%s\"", what, p_word[kind], (int)e->status,
                 e->message);
    }
}

/* Use a stale handle of kind: refused, naming the kind. */
static void p_use_stale(const pobj_t *o, uint64_t r) {
    cm_status_t st;
    const char *what;
    cm_buffer_info_t info, info0;
    cm_host_buffer_info_t hinfo, hinfo0;
    memset(&info, 0x5A, sizeof info);
    memset(&hinfo, 0x5A, sizeof hinfo);
    memcpy(&info0, &info, sizeof info);
    memcpy(&hinfo0, &hinfo, sizeof hinfo);
    bool flag = true;
    switch (o->kind) {
    case P_BUF:
        if (r & 1) { what = "cm_buffer_info"; st = cm_buffer_info(o->h, &info); }
        else { what = "cm_buffer_destroy"; st = cm_buffer_destroy(o->h); }
        break;
    case P_HBUF:
        if (r & 1) { what = "cm_host_buffer_info"; st = cm_host_buffer_info(o->h, &hinfo); }
        else { what = "cm_host_buffer_destroy"; st = cm_host_buffer_destroy(o->h); }
        break;
    case P_STREAM:
        if (r & 1) { what = "cm_stream_synchronize"; st = cm_stream_synchronize(o->h); }
        else { what = "cm_stream_release"; st = cm_stream_release(o->h); }
        break;
    case P_EVENT:
        if (r & 1) { what = "cm_event_query"; st = cm_event_query(o->h, &flag); }
        else { what = "cm_event_release"; st = cm_event_release(o->h); }
        break;
    default:
        what = "cm_timer_destroy";
        st = cm_timer_destroy(o->h);
        break;
    }
    if (st != INV) fail_msg("%s on a stale %s returned %d", what, p_word[o->kind], (int)st);
    p_expect_stale(o->kind, what);
    assert_memory_equal(&info, &info0, sizeof info); /* nothing written */
    assert_memory_equal(&hinfo, &hinfo0, sizeof hinfo);
    assert_true(flag);
}

static cm_status_t p_create(cm_device_t *dev, int kind, size_t bytes, void **out) {
    switch (kind) {
    case P_BUF: return cm_buffer_create(dev, bytes, (cm_buffer_t **)out);
    case P_HBUF: return cm_host_buffer_create(dev, bytes, CM_HOST_BUFFER_DEFAULT, (cm_host_buffer_t **)out);
    case P_STREAM: return cm_stream_acquire(dev, CM_STREAM_PRIORITY_LOW, (cm_stream_t **)out);
    case P_EVENT: return cm_event_acquire(dev, CM_EVENT_SYNC_ONLY, (cm_event_t **)out);
    default: return cm_timer_create(dev, (cm_timer_t **)out);
    }
}

static cm_status_t p_destroy(const pobj_t *o) {
    switch (o->kind) {
    case P_BUF: return cm_buffer_destroy(o->h);
    case P_HBUF: return cm_host_buffer_destroy(o->h);
    case P_STREAM: return cm_stream_release(o->h);
    case P_EVENT: return cm_event_release(o->h);
    default: return cm_timer_destroy(o->h);
    }
}

/* A live handle still acts on its own object. */
static void p_use_live(const pobj_t *o) {
    cm_buffer_info_t info;
    cm_host_buffer_info_t hinfo;
    bool done = false;
    switch (o->kind) {
    case P_BUF:
        CM_ASSERT_OK(cm_buffer_info(o->h, &info));
        assert_int_equal(info.bytes, o->bytes);
        break;
    case P_HBUF:
        CM_ASSERT_OK(cm_host_buffer_info(o->h, &hinfo));
        assert_int_equal(hinfo.bytes, o->bytes);
        break;
    case P_STREAM: CM_ASSERT_OK(cm_stream_synchronize(o->h)); break;
    case P_EVENT: CM_ASSERT_OK(cm_event_query(o->h, &done)); break;
    default: break;
    }
}

/* The device objects count exactly the live objects this test holds on them. */
static void p_check_counts(cm_device_t *const devs[2], const pobj_t *live, size_t n_live) {
    for (int d = 0; d < 2; ++d) {
        size_t n[P_NKINDS] = {0};
        for (size_t i = 0; i < n_live; ++i)
            if (live[i].dev == d) ++n[live[i].kind];
        cm_memory_report_t rep;
        CM_ASSERT_OK(cm_device_memory_report(devs[d], &rep));
        assert_int_equal(rep.live_buffers, n[P_BUF]);
        assert_int_equal(rep.live_host_buffers, n[P_HBUF]);
        cm_stream_pool_stats_t st;
        CM_ASSERT_OK(cm_stream_pool_stats(devs[d], &st));
        assert_int_equal(st.acquired[0] + st.acquired[1], n[P_STREAM]);
        assert_int_equal(st.events_acquired, n[P_EVENT] + 2 * n[P_TIMER]);
    }
}

static int p_setup(void **state) {
    (void)state;
    xfake_install(2);
    p_seen = calloc((size_t)1 << P_SEEN_BITS, sizeof *p_seen);
    return p_seen != NULL ? 0 : -1;
}

static int p_teardown(void **state) {
    (void)state;
    free(p_seen);
    p_seen = NULL;
    int left = fake_outstanding() + xfake_live(), v = fake.violations;
    xfake_uninstall();
    return (left || v) ? -1 : 0;
}

static void test_public_api_stale_handles_never_alias(void **state) {
    (void)state;
    const unsigned long OPS = 120000;
    const int per_dev_max[P_NKINDS] = {24, 12, 12, 16, 6};
    cm_device_t *devs[2];
    CM_ASSERT_OK(cm_device_open(0, &devs[0]));
    CM_ASSERT_OK(cm_device_open(1, &devs[1]));
    p_seen_add(devs[0]);
    p_seen_add(devs[1]);
    pobj_t live[P_MAX_LIVE], stale[P_STALE];
    size_t n_live = 0, n_stale = 0;
    cm_device_t *stale_devs[64];
    size_t n_stale_devs = 0;
    unsigned long cycles = 0, stale_uses = 0;
    uint64_t rng = 0x1234567887654321ull;
    /* device 0 current, as an application that works on device 0 and has objects on both */
    fake.current = 0;
    fake.has_ctx = 1;

    for (unsigned long op = 0; op < OPS; ++op) {
        uint64_t r = cm_test_rand(&rng);
        unsigned what = (unsigned)(r % 1000);
        if (what < 350) { /* create */
            int d = (int)((r >> 10) & 1), kind = (int)((r >> 11) % P_NKINDS), have = 0;
            for (size_t i = 0; i < n_live; ++i) have += live[i].dev == d && live[i].kind == kind;
            if (have >= per_dev_max[kind] || n_live >= P_MAX_LIVE) continue;
            size_t bytes = (kind == P_BUF || kind == P_HBUF) ? (size_t)((r >> 16) % 4096) : 0;
            void *h = NULL;
            CM_ASSERT_OK(p_create(devs[d], kind, bytes, &h));
            assert_non_null(h);
            p_seen_add(h);
            live[n_live++] = (pobj_t){h, kind, d, bytes};
        } else if (what < 650) { /* destroy */
            if (n_live == 0) continue;
            size_t i = (size_t)((r >> 10) % n_live);
            CM_ASSERT_OK(p_destroy(&live[i]));
            stale[n_stale++ % P_STALE] = live[i];
            live[i] = live[--n_live];
        } else if (what < 850) { /* use a stale handle */
            if (n_stale == 0) continue;
            size_t have = n_stale < P_STALE ? n_stale : P_STALE;
            const pobj_t *o = &stale[(r >> 10) % have];
            p_use_stale(o, r >> 40);
            ++stale_uses;
            /* it did not act on a live object: every live one still answers as before */
            if ((r >> 50 & 7) == 0) {
                for (size_t i = 0; i < n_live; ++i) p_use_live(&live[i]);
                p_check_counts(devs, live, n_live);
            }
        } else if (what < 995) { /* use a live handle */
            if (n_live == 0) continue;
            p_use_live(&live[(r >> 10) % n_live]);
        } else { /* close and reopen a device: its objects become stale */
            int d = (int)((r >> 10) & 1);
            for (size_t i = 0; i < n_live;) {
                if (live[i].dev == d) {
                    CM_ASSERT_OK(p_destroy(&live[i]));
                    stale[n_stale++ % P_STALE] = live[i];
                    live[i] = live[--n_live];
                } else {
                    ++i;
                }
            }
            CM_ASSERT_OK(cm_device_close(devs[d]));
            stale_devs[n_stale_devs++ % 64] = devs[d];
            CM_ASSERT_OK(cm_device_open(d, &devs[d]));
            p_seen_add(devs[d]);
            ++cycles;
            /* every device object closed so far is stale, named as a device */
            size_t nd = n_stale_devs < 64 ? n_stale_devs : 64;
            for (size_t i = 0; i < nd; ++i) {
                int ord = -7;
                EXPECT_FAIL(cm_device_ordinal(stale_devs[i], &ord), INV, "device");
                assert_non_null(strstr(cm_last_error()->message, STALE_WORD));
                assert_int_equal(ord, -7);
                cm_buffer_t *b = NULL;
                EXPECT_FAIL(cm_buffer_create(stale_devs[i], 16, &b), INV, "device");
                assert_null(b);
            }
            p_check_counts(devs, live, n_live);
        }
        /* the fake device stays where the application put it */
        if (fake.current != 0 || fake.ctx_depth != 0) fail_msg("current device changed to %d", fake.current);
    }
    for (size_t i = 0; i < n_live; ++i) CM_ASSERT_OK(p_destroy(&live[i]));
    size_t have = n_stale < P_STALE ? n_stale : P_STALE;
    for (size_t i = 0; i < have; ++i) p_use_stale(&stale[i], i);
    CM_ASSERT_OK(cm_device_close(devs[0]));
    CM_ASSERT_OK(cm_device_close(devs[1]));
    print_message("public API: %lu operations, %lu stale uses, %lu close/reopen cycles\n", OPS,
                  stale_uses, cycles);
    assert_true(cycles >= 100);
    assert_true(stale_uses >= 10000);
    assert_int_equal(xfake_live(), 0);
    EXPECT_CLEAN();
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kind_names),
        cmocka_unit_test(test_new_obj_end),
        cmocka_unit_test(test_stale_reported_with_its_kind_forever),
        cmocka_unit_test(test_value_of_another_kind),
        cmocka_unit_test(test_null_and_garbage_are_not_handles),
        cmocka_unit_test(test_stress_million_per_kind),
        cmocka_unit_test_setup_teardown(test_public_api_stale_handles_never_alias, p_setup, p_teardown),
        cmocka_unit_test(test_generation_exhaustion_retires_slot), /* last: ages the table */
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
