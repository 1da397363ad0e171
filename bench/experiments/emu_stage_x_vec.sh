#!/usr/bin/env bash
# Host check (no GPU) of kernels/gemm_skinny.cu's stage_x_vec, the literal function text under
# host shims: for R = 1 .. 16 (its bucket RB 4 / 8 / 16), K in 1 .. 2049 (chunks with tails)
# and xk = R up to 4s, plus 4, and 64, every thread of a block stages every chunk; xs must hold
# X(k0 + kk, r) for r < R and kk < kc, zeros elsewhere; every load must lie inside an
# allocation that ends at X's last element ((K - 1) xk + R floats: nothing past vector R - 1 is
# read), 16-byte loads 16-byte aligned; built with ASan / UBSan. Prints "N cases, 0 failed".
set -euo pipefail
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
awk '/^template <int RB>$/{f=1} f{print} f&&/^}$/{exit}' "$root/kernels/gemm_skinny.cu" >"$d/stage.inc"
grep -q stage_x_vec "$d/stage.inc" || { echo "stage_x_vec not found"; exit 1; }
cat >"$d/emu.cpp" <<'CPP'
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>
#define __device__
#define __forceinline__ inline
#define __restrict__
struct float4 { float x, y, z, w; };
static float4 make_float4(float a, float b, float c, float d) { return {a, b, c, d}; }
static const float *g_lo, *g_hi; static int g_bad = 0; static int64_t g_xk; static int g_R, g_K;
static void chk(const float *p, int n) {
    if (p < g_lo || p + n > g_hi) { g_bad++; return; }
    for (int e = 0; e < n; ++e) { int64_t off = p + e - g_lo; int64_t k = off / g_xk, r = off % g_xk;
        if (r >= g_R || k >= g_K) g_bad++; }
}
static float __ldg(const float *p) { chk(p, 1); return *p; }
static float4 __ldg(const float4 *p) { chk((const float *)p, 4); if ((uintptr_t)p % 16) g_bad += 1000; return *p; }
constexpr int ROWS_WARPS = 8; constexpr int KC = 256; constexpr int XS_LD = KC + 4;
#include "stage.inc"
template <int RB> int run(int R, int K, int64_t xk) {
    // X(k, r) = x[k * xk + r], allocation ends at the last element used: (K-1)*xk + R
    size_t n = (size_t)(K - 1) * xk + R;
    float *buf = (float *)aligned_alloc(16, ((n + 3) / 4 * 4 + 4) * 4);
    for (size_t i = 0; i < n; ++i) buf[i] = (float)(i % 9973) + 0.5f;
    g_lo = buf; g_hi = buf + n; g_xk = xk; g_R = R; g_K = K; g_bad = 0;
    static float xs[16][XS_LD];
    int errs = 0;
    for (int k0 = 0; k0 < K; k0 += KC) {
        const int kc = K - k0 < KC ? K - k0 : KC;
        for (int r = 0; r < 16; ++r) for (int i = 0; i < XS_LD; ++i) xs[r][i] = -1.0f;
        for (int t = 0; t < 32 * ROWS_WARPS; ++t)
            stage_x_vec<RB>(buf, xk, R, k0, kc, t, *reinterpret_cast<float (*)[RB][XS_LD]>(xs));
        for (int r = 0; r < RB; ++r) for (int kk = 0; kk < KC; ++kk) {
            float want = (r < R && kk < kc) ? buf[(int64_t)(k0 + kk) * xk + r] : 0.0f;
            if (xs[r][kk] != want) errs++;
        }
    }
    free(buf);
    return errs + g_bad;
}
int main() {
    int fails = 0, cases = 0;
    int Ks[] = {1, 7, 255, 256, 257, 301, 600, 1000, 2049};
    for (int R = 1; R <= 16; ++R) for (int K : Ks) for (int64_t xk : {(int64_t)((R + 3) / 4 * 4), (int64_t)((R + 3) / 4 * 4 + 4), (int64_t)64}) {
        int e = R <= 4 ? run<4>(R, K, xk) : R <= 8 ? run<8>(R, K, xk) : run<16>(R, K, xk);
        cases++; if (e) { fails++; printf("FAIL R %d K %d xk %ld: %d\n", R, K, (long)xk, e); }
    }
    printf("%d cases, %d failed\n", cases, fails);
    return fails != 0;
}
CPP
g++ -std=c++17 -O1 -fsanitize=address,undefined -Wno-unknown-pragmas -I"$d" "$d/emu.cpp" -o "$d/emu"
"$d/emu" | tail -3
