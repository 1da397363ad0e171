/*
 * Built-in target descriptions: the per-compute-capability limits of the CUDA C++ Programming
 * Guide's "Technical Specifications per Compute Capability" table, so that configurations can
 * be validated and occupancy computed for a GPU the user does not have.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include <cudamodel/launch.h>

#include "internal.h"

typedef struct {
    int cc;
    const char *label;        /* architecture name and the products it covers */
    int max_threads_per_sm;
    int max_blocks_per_sm;
    size_t smem_per_sm;       /* shared memory per SM (maximum carveout) */
    size_t reserved_smem;     /* reserved by the system per block */
    int sm_count;             /* a representative product's SM count */
    const char *sm_product;   /* which product that count is from */
} cm__target_t;

#define KIB ((size_t)1024)

static const cm__target_t cm__targets[] = {
    {75, "sm_75 (Turing: RTX 20, GTX 16, T4, Quadro RTX)", 1024, 16, 64 * KIB, 0, 40, "T4"},
    {80, "sm_80 (Ampere: A100, A30)", 2048, 32, 164 * KIB, 1 * KIB, 108, "A100"},
    {86, "sm_86 (Ampere: RTX 30, A10, A40, RTX A6000)", 1536, 16, 100 * KIB, 1 * KIB, 84, "RTX A6000"},
    {87, "sm_87 (Ampere: Jetson AGX Orin, Orin NX/Nano)", 1536, 16, 164 * KIB, 1 * KIB, 16, "Jetson AGX Orin"},
    {89, "sm_89 (Ada: RTX 40, L4, L40, L40S, RTX 6000 Ada)", 1536, 24, 100 * KIB, 1 * KIB, 34, "RTX 4060 Ti"},
    {90, "sm_90 (Hopper: H100, H200, GH200)", 2048, 32, 228 * KIB, 1 * KIB, 132, "H100/H200 SXM"},
    {100, "sm_100 (Blackwell: B200, GB200)", 2048, 32, 228 * KIB, 1 * KIB, 148, "B200"},
    {120, "sm_120 (Blackwell: RTX 50, RTX PRO 6000 Blackwell)", 1536, 32, 100 * KIB, 1 * KIB, 170, "RTX 5090"},
};
#define CM__N_TARGETS ((int)(sizeof cm__targets / sizeof cm__targets[0]))

/* Product and family names (lower case, matched as substrings of the lower-cased request,
 * longest first within the table order). */
static const struct {
    const char *key;
    int cc;
} cm__products[] = {
    {"rtx pro 6000 blackwell", 120}, {"rtx 6000 ada", 89}, {"rtx a6000", 86}, {"rtx a5000", 86},
    {"rtx a4000", 86}, {"quadro rtx", 75}, {"rtx 50", 120}, {"rtx 40", 89}, {"rtx 30", 86},
    {"rtx 20", 75}, {"gtx 16", 75}, {"jetson", 87}, {"orin", 87}, {"gh200", 90}, {"h100", 90},
    {"h200", 90}, {"h800", 90}, {"gb200", 100}, {"b200", 100}, {"a100", 80}, {"a800", 80},
    {"a30", 80}, {"a40", 86}, {"a10", 86}, {"l40", 89}, {"l4", 89}, {"t4", 75},
    {"turing", 75}, {"ampere", 80}, {"ada", 89}, {"hopper", 90}, {"blackwell", 100},
};

int cm_target_count(void) {
    return CM__N_TARGETS;
}

const char *cm_target_name(int i) {
    static const char *const names[] = {"sm_75", "sm_80", "sm_86", "sm_87",
                                        "sm_89", "sm_90", "sm_100", "sm_120"};
    _Static_assert(sizeof names / sizeof names[0] == sizeof cm__targets / sizeof cm__targets[0],
                   "one name per target");
    return (i >= 0 && i < CM__N_TARGETS) ? names[i] : NULL;
}

/* "sm_89", "compute_89", "89", "8.9" -> 89; anything else -> 0 */
static int cm__parse_arch(const char *s) {
    if (strncmp(s, "sm_", 3) == 0) s += 3;
    else if (strncmp(s, "compute_", 8) == 0) s += 8;
    int major = 0, digits = 0;
    while (isdigit((unsigned char)*s) && digits < 3) major = major * 10 + (*s++ - '0'), ++digits;
    if (digits == 0) return 0;
    if (*s == '.') {
        ++s;
        if (!isdigit((unsigned char)*s)) return 0;
        int minor = *s++ - '0';
        return *s == '\0' ? major * 10 + minor : 0;
    }
    if (*s == 'a' || *s == 'f') ++s;
    return (*s == '\0' && digits >= 2) ? major : 0;
}

static void cm__fill_target(const cm__target_t *t, cm_device_limits_t *out) {
    cm_device_limits_t l;
    memset(&l, 0, sizeof l);
    snprintf(l.name, sizeof l.name, "%s", t->label);
    l.ordinal = -1;
    l.cc_major = t->cc / 10;
    l.cc_minor = t->cc % 10;
    l.multiprocessor_count = t->sm_count;
    l.warp_size = 32;
    l.max_threads_per_block = 1024;
    l.max_block_dim[0] = 1024;
    l.max_block_dim[1] = 1024;
    l.max_block_dim[2] = 64;
    l.max_grid_dim[0] = 2147483647;
    l.max_grid_dim[1] = 65535;
    l.max_grid_dim[2] = 65535;
    l.shared_mem_per_block = 48 * KIB;
    l.shared_mem_per_multiprocessor = t->smem_per_sm;
    l.reserved_shared_mem_per_block = t->reserved_smem;
    l.shared_mem_per_block_optin = t->smem_per_sm - t->reserved_smem;
    l.regs_per_block = 65536;
    l.regs_per_multiprocessor = 65536;
    l.max_threads_per_multiprocessor = t->max_threads_per_sm;
    l.max_blocks_per_multiprocessor = t->max_blocks_per_sm;
    l.cluster_launch = t->cc >= 90;
    *out = l;
}

cm_status_t cm_target_limits(const char *target, cm_device_limits_t *out) {
    CM__REQUIRE(target != NULL && out != NULL, "pass a target name such as \"sm_89\" and an output",
                "target or out is NULL");
    char lower[128];
    size_t n = 0;
    for (; target[n] != '\0' && n + 1 < sizeof lower; ++n) lower[n] = (char)tolower((unsigned char)target[n]);
    lower[n] = '\0';
    /* trim surrounding spaces */
    char *p = lower;
    while (*p == ' ') ++p;
    for (size_t k = strlen(p); k > 0 && p[k - 1] == ' '; --k) p[k - 1] = '\0';

    int cc = cm__parse_arch(p);
    if (cc == 0) {
        for (size_t i = 0; i < sizeof cm__products / sizeof cm__products[0]; ++i) {
            if (strstr(p, cm__products[i].key) != NULL) {
                cc = cm__products[i].cc;
                break;
            }
        }
    }
    for (int i = 0; i < CM__N_TARGETS; ++i) {
        if (cm__targets[i].cc == cc) {
            cm__fill_target(&cm__targets[i], out);
            return CM_OK;
        }
    }
    return CM__FAIL(CM_ERROR_NOT_SUPPORTED, -1,
                    "use one of sm_75, sm_80, sm_86, sm_87, sm_89, sm_90, sm_100, sm_120, or a "
                    "product name such as \"RTX 4060 Ti\", \"A100\", \"H200\"; on a machine with the "
                    "GPU use cm_device_get_limits()",
                    "no built-in target matches \"%s\"%s", target,
                    cc ? " (that architecture has no built-in table)" : "");
}
