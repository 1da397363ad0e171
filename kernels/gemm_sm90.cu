// The Hopper tensor-core GEMM (sm_90a): C = alpha * A * B^T + beta * C with A (M x K) and
// B (N x K) both K-contiguous ("TN"), C row-major; BF16 or TF32 operands, FP32 accumulation,
// FP32 or BF16 C. Interface and operand rules: kernels/gemm_sm90.h.
//
// A block computes one BM x BN = 128 x BN tile of C with 384 threads in three warpgroups
// (the configuration with two blocks a multiprocessor: see Cfg):
//  - warpgroup 0 is the producer: after giving registers back (setmaxnreg.dec) one thread
//    issues bulk tensor copies (cp.async.bulk.tensor, "TMA") of the A tile (128 rows x 128 B of
//    K) and the B tile (BN rows x 128 B of K) of each K step into a ring of STAGES shared-memory
//    stages; each stage has a "full" mbarrier (the copy engine completes its byte count) and an
//    "empty" mbarrier (the 256 consumer threads arrive once they are done reading it);
//  - warpgroups 1 and 2 are consumers (setmaxnreg.inc): each owns 64 rows of the tile and issues
//    wgmma.mma_async m64nBNk16 (bf16) or m64nBNk8 (tf32) reading A and B straight from shared
//    memory through matrix descriptors, accumulating 64 x BN floats in registers (BN/2 per
//    thread). One wgmma group stays in flight: after committing step i the consumer waits for
//    step i-1's group and frees its stage.
// The copies use the 128-byte swizzle; a K step is exactly one 128-byte swizzle row (64 bf16 or
// 32 floats), so the descriptors use the canonical K-major 128B-swizzle layout: 8-row groups
// 1024 bytes apart (SBO), and the K offset of each wgmma inside the row added to the start
// address. Tiles are 1024-byte aligned, as the swizzle pattern requires.
// Tails: the copy engine fills out-of-bounds elements of a box with zeros, so partial K steps
// and partial M/N tiles compute zeros there; only the epilogue predicates its stores.
// Epilogue (row-major C): where every row of C starts on an even element, each thread stores
// its accumulator pairs in place; otherwise (odd ldc) each warp stages its rows through shared
// memory and writes whole row runs (the kernel's epilogue comments say why).
// Block order: tiles are grouped by GROUP_M row-blocks so that blocks running together share
// A and B panels in L2.
// Strided batches: matrix blockIdx.z (gridDim.z matrices a launch, blockIdx.x the tile within
// the matrix, in the order above). An operand that differs between matrices has a 3-D tensor
// map {K, rows, batch} whose third stride is its batch stride, and the producer copies box
// (k, row, z); one the whole batch shares (stride 0), and every operand of a single matrix,
// keeps the 2-D map and copy. The epilogue writes C at z * stride_c.
//
// Device code exists only in the sm_90a compilation (__CUDA_ARCH_FEAT_SM90_ALL); an sm_90
// compilation without the arch-specific features is an error, so an image for cc 9.0 is always
// the real one. Any other architecture compiles an empty kernel that the host never launches
// (cm__gemm_sm90 checks the device's compute capability and the kernel's image first).
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>  // getenv, atoi (CUDAMODEL_GEMM_3X_PROMO)
#include <string.h>

#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <cudaTypedefs.h>  // CUtensorMap and PFN_cuTensorMapEncodeTiled: types only, no libcuda

#include "func_attr.cuh"
#include "gemm.h"  // CM__GEMM_MAX_BATCH_PER_LAUNCH
#include "pdl.cuh"
#include "gemm_sm90.h"

#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ == 900) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
#error "kernels/gemm_sm90.cu needs the arch-specific target sm_90a (-gencode arch=compute_90a,code=sm_90a)"
#endif
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define CM__SM90A_DEVICE 1
#endif

namespace cm__sm90 {

enum { kBf16 = CM__GEMM_SM90_BF16, kTf32 = CM__GEMM_SM90_TF32 };

constexpr int kBM = 128;          // rows of C per block (two consumer warpgroups x 64)
constexpr int kRowBytes = 128;    // bytes of K per stage and row: one 128-byte swizzle row
constexpr int kGroupM = 16;       // row-blocks per raster group
// the row-major epilogue's staging buffer of a warp: 16 rows x 64 floats, rows 72 floats apart
// (a fragment store's 8 rows x 8 floats fall on distinct banks in each half-warp)
constexpr int kEpiPitch = 72;
constexpr int kEpiWarpFloats = 16 * kEpiPitch;

template <int BN, int STAGES, int IT, int MINB>
struct Cfg {
    // One block a multiprocessor (MINB 1): 384 threads, warpgroup 0 the producer, which gives
    // registers back to the consumers (setmaxnreg). Two blocks (MINB 2): 288 threads, the
    // consumers are warpgroups 0 and 1 and the producer is warp 8 alone, no setmaxnreg (its
    // register cap at entry, 65536 / 576 = 112, already fits 64 accumulators).
    static constexpr int kThreads = MINB == 1 ? 384 : 288;
    static constexpr int kElem = IT == kBf16 ? 2 : 4;
    static constexpr int kBK = kRowBytes / kElem;            // 64 bf16 or 32 floats
    static constexpr int kKW = IT == kBf16 ? 16 : 8;          // K of one wgmma
    static constexpr int kABytes = kBM * kRowBytes;            // 16 KiB
    static constexpr int kBBytes = BN * kRowBytes;             // 16 or 32 KiB
    static constexpr int kStageBytes = kABytes + kBBytes;
    static constexpr int kSmem = STAGES * kStageBytes + 2 * STAGES * 8 + 1024;  // + alignment slack
    // registers after setmaxnreg (MINB 1): 65536 / 384 = 170 a thread at entry (cap 168);
    // producer down, consumers up, the block's total unchanged or less.
    static constexpr int kProducerRegs = 40;
    static constexpr int kConsumerRegs = 232;
    static_assert(BN == 128 || BN == 192 || BN == 256, "BN is 128, 192 or 256");
    static_assert(kSmem <= 227 * 1024, "shared memory per block");
    static_assert(MINB == 1 || 2 * (kSmem + 1024) <= 228 * 1024, "two blocks per multiprocessor");
    static_assert(MINB == 2 || 128 * kProducerRegs + 256 * kConsumerRegs <= 384 * 168,
                  "setmaxnreg budget");
    static_assert(MINB == 1 || MINB == 2, "one or two blocks a multiprocessor");
    static_assert(STAGES * kStageBytes >= 8 * kEpiWarpFloats * 4,
                  "the epilogue's staging buffers fit in the stage ring");
};

#ifdef CM__SM90A_DEVICE
// ------------------------------------------------------------------ PTX wrappers (sm_90a)
__device__ __forceinline__ uint32_t smem_u32(const void *p) {
    return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void mbar_init(uint32_t bar, uint32_t count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory");
}
__device__ __forceinline__ void mbar_expect_tx(uint32_t bar, uint32_t bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes)
                 : "memory");
}
__device__ __forceinline__ void mbar_arrive(uint32_t bar) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(bar) : "memory");
}
__device__ __forceinline__ void mbar_wait(uint32_t bar, uint32_t parity) {
    uint32_t done = 0;
    do {
        asm volatile(
            "{\n.reg .pred p;\n"
            "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
            "selp.u32 %0, 1, 0, p;\n}\n"
            : "=r"(done)
            : "r"(bar), "r"(parity)
            : "memory");
    } while (!done);
}
// 2-D bulk tensor copy global -> shared, completing on mbarrier `bar`; c0 is the inner (K)
// coordinate in elements, c1 the row.
__device__ __forceinline__ void tma_load_2d(uint32_t dst, const CUtensorMap *map, int c0, int c1,
                                            uint32_t bar) {
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
        " [%0], [%1, {%2, %3}], [%4];" ::"r"(dst),
        "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(bar)
        : "memory");
}
// The same from a 3-D map: c2 is the matrix of the batch.
__device__ __forceinline__ void tma_load_3d(uint32_t dst, const CUtensorMap *map, int c0, int c1,
                                            int c2, uint32_t bar) {
    asm volatile(
        "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes"
        " [%0], [%1, {%2, %3, %4}], [%5];" ::"r"(dst),
        "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(c2), "r"(bar)
        : "memory");
}
__device__ __forceinline__ void wgmma_fence() {
    asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
}
__device__ __forceinline__ void wgmma_commit() {
    asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
}
template <int N>
__device__ __forceinline__ void wgmma_wait() {
    asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory");
}
// Shared-memory matrix descriptor of a K-major tile in the 128-byte swizzle layout: start
// address >> 4 (bits 0-13), leading byte offset (unused for this layout; 16 B), stride byte
// offset 1024 B between 8-row groups (bits 32-45), layout type 1 = 128B swizzle (bits 62-63).
__device__ __forceinline__ uint64_t smem_desc(uint32_t addr) {
    uint64_t d = (uint64_t)((addr & 0x3FFFFu) >> 4);
    d |= (uint64_t)1 << 16;
    d |= (uint64_t)(1024 >> 4) << 32;
    d |= (uint64_t)1 << 62;
    return d;
}

// The same for an MN-major (N-contiguous) B tile in the 128-byte swizzle layout, as the BT
// kernels stage it: BN / 64 chunks of 64 N (128 bytes) x 64 K rows, 8 KiB apart, each one
// bulk tensor copy. In 16-byte units the canonical MN-major form is ((8, n), (8, k)) :
// ((1, LBO), (8, SBO)): 8 units (64 bf16) contiguous along N, the next 64 N at the leading
// byte offset (the chunk stride, 8192 B); 8 K rows 128 bytes apart, the next 8 rows at the
// stride byte offset (1024 B).
__device__ __forceinline__ uint64_t smem_desc_mn(uint32_t addr) {
    uint64_t d = (uint64_t)((addr & 0x3FFFFu) >> 4);
    d |= (uint64_t)(8192 >> 4) << 16;
    d |= (uint64_t)(1024 >> 4) << 32;
    d |= (uint64_t)1 << 62;
    return d;
}

// The accumulator operands of a wgmma asm statement: d[0] .. d[N-1], each read and written
// ("+f"), in the order of the instruction's register list.
#define CM__SM90_D8(d, i)                                                                        \
    "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), "+f"(d[i + 4]), "+f"(d[i + 5]),   \
        "+f"(d[i + 6]), "+f"(d[i + 7])
#define CM__SM90_ACC64(d)                                                                        \
    CM__SM90_D8(d, 0), CM__SM90_D8(d, 8), CM__SM90_D8(d, 16), CM__SM90_D8(d, 24),               \
        CM__SM90_D8(d, 32), CM__SM90_D8(d, 40), CM__SM90_D8(d, 48), CM__SM90_D8(d, 56)
#define CM__SM90_ACC96(d)                                                                        \
    CM__SM90_ACC64(d), CM__SM90_D8(d, 64), CM__SM90_D8(d, 72), CM__SM90_D8(d, 80),             \
        CM__SM90_D8(d, 88)
#define CM__SM90_ACC128(d)                                                                       \
    CM__SM90_ACC96(d), CM__SM90_D8(d, 96), CM__SM90_D8(d, 104), CM__SM90_D8(d, 112),           \
        CM__SM90_D8(d, 120)

// wgmma.mma_async with both operands from shared memory; d += A * B^T (K-major both),
// d = A * B^T when accumulate == 0. Register lists written out per shape. TB: B is MN-major
// (the instruction's imm-trans-b = 1; 16-bit types only).
template <int BN, int IT, bool TB = false>
struct Wgmma;

// TB: imm-trans-b as the asm's immediate operand %67 (as Wgmma<256, kBf16, TB>)
template <bool TB> struct Wgmma<128, kBf16, TB> {
    static __device__ __forceinline__ void mma(float (&d)[64], uint64_t da, uint64_t db, int accumulate) {
        asm volatile(
            "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
            "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16\n"
            "{"
            "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15,"
            "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31,"
            "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47,"
            "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
            "}, %64, %65, p, 1, 1, 0, %67;\n}\n"
            : CM__SM90_ACC64(d)
            : "l"(da), "l"(db), "r"(accumulate), "n"(TB ? 1 : 0));
    }
};

// TB: imm-trans-b as the asm's immediate operand %131, one body for both forms of B
template <bool TB> struct Wgmma<256, kBf16, TB> {
    static __device__ __forceinline__ void mma(float (&d)[128], uint64_t da, uint64_t db, int accumulate) {
        asm volatile(
            "{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
            "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16\n"
            "{"
            "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15,"
            "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31,"
            "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47,"
            "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63,"
            "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79,"
            "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95,"
            "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111,"
            "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127"
            "}, %128, %129, p, 1, 1, 0, %131;\n}\n"
            : CM__SM90_ACC128(d)
            : "l"(da), "l"(db), "r"(accumulate), "n"(TB ? 1 : 0));
    }
};

template <> struct Wgmma<128, kTf32> {
    static __device__ __forceinline__ void mma(float (&d)[64], uint64_t da, uint64_t db, int accumulate) {
        asm volatile(
            "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
            "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32\n"
            "{"
            "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15,"
            "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31,"
            "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47,"
            "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
            "}, %64, %65, p, 1, 1;\n}\n"
            : CM__SM90_ACC64(d)
            : "l"(da), "l"(db), "r"(accumulate));
    }
};

template <> struct Wgmma<192, kTf32> {
    static __device__ __forceinline__ void mma(float (&d)[96], uint64_t da, uint64_t db, int accumulate) {
        asm volatile(
            "{\n.reg .pred p;\nsetp.ne.b32 p, %98, 0;\n"
            "wgmma.mma_async.sync.aligned.m64n192k8.f32.tf32.tf32\n"
            "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95}, %96, %97, p, 1, 1;\n}\n"
            : CM__SM90_ACC96(d)
            : "l"(da), "l"(db), "r"(accumulate));
    }
};

template <> struct Wgmma<256, kTf32> {
    static __device__ __forceinline__ void mma(float (&d)[128], uint64_t da, uint64_t db, int accumulate) {
        asm volatile(
            "{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
            "wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32\n"
            "{"
            "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15,"
            "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31,"
            "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47,"
            "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63,"
            "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79,"
            "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95,"
            "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111,"
            "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127"
            "}, %128, %129, p, 1, 1;\n}\n"
            : CM__SM90_ACC128(d)
            : "l"(da), "l"(db), "r"(accumulate));
    }
};

// wgmma.mma_async with A from registers (TF32): d += A * B^T, B K-major in shared memory; A is
// the warpgroup's 64 x 8 slice as four 32-bit registers a thread, in the m16n8k8 TF32 fragment
// layout of each warp's 16 rows (a[0] row r, column c; a[1] row r + 8; a[2] column c + 4;
// a[3] both; r = lane / 4, c = lane % 4). The register-A form takes no transpose flags: the
// "AT" kernels use it for an A that is MN-major in memory (the tensor cores read TF32 from
// shared memory K-major only).
template <int BN>
struct WgmmaRA;

template <> struct WgmmaRA<128> {
    static __device__ __forceinline__ void mma(float (&d)[64], const uint32_t (&a)[4], uint64_t db,
                                               int accumulate) {
        asm volatile(
            "{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"
            "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32\n"
            "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, {%64, %65, %66, %67}, %68, p, 1, 1;\n}\n"
            : CM__SM90_ACC64(d)
            : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(accumulate));
    }
};

template <> struct WgmmaRA<256> {
    static __device__ __forceinline__ void mma(float (&d)[128], const uint32_t (&a)[4], uint64_t db,
                                               int accumulate) {
        asm volatile(
            "{\n.reg .pred p;\nsetp.ne.b32 p, %133, 0;\n"
            "wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32\n"
            "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127}, {%128, %129, %130, %131}, %132, p, 1, 1;\n}\n"
            : CM__SM90_ACC128(d)
            : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(accumulate));
    }
};

// One 32-bit load from shared memory (kept after the mbarrier wait that makes it valid).
__device__ __forceinline__ uint32_t lds32(uint32_t addr) {
    uint32_t v;
    asm volatile("ld.shared.b32 %0, [%1];" : "=r"(v) : "r"(addr) : "memory");
    return v;
}

// The 256 consumer threads (two warpgroups) wait for one another: named barrier 1 (0 is
// __syncthreads'), so the producer warps take no part.
__device__ __forceinline__ void consumer_sync() {
    asm volatile("bar.sync 1, 256;" ::: "memory");
}

// Stores of the epilogue: element off of C (FP32, or BF16 with c_bf16) = v, plus beta times
// its old value with read_c; store_pair writes off and off + 1 (one 8- or 4-byte store; the
// caller checked the alignment), or off alone when !both.
__device__ __forceinline__ void store_one(void *c, long long off, float v, int c_bf16,
                                          bool read_c, float beta) {
    if (c_bf16) {
        __nv_bfloat16 *p = static_cast<__nv_bfloat16 *>(c) + off;
        if (read_c) v = fmaf(beta, __bfloat162float(*p), v);
        *p = __float2bfloat16_rn(v);
    } else {
        float *p = static_cast<float *>(c) + off;
        if (read_c) v = fmaf(beta, *p, v);
        *p = v;
    }
}
__device__ __forceinline__ void store_pair(void *c, long long off, float2 v, bool both,
                                           int c_bf16, bool read_c, float beta) {
    if (!both) {
        store_one(c, off, v.x, c_bf16, read_c, beta);
        return;
    }
    if (c_bf16) {
        __nv_bfloat162 *p =
            reinterpret_cast<__nv_bfloat162 *>(static_cast<__nv_bfloat16 *>(c) + off);
        if (read_c) {
            const float2 old = __bfloat1622float2(*p);
            v.x = fmaf(beta, old.x, v.x);
            v.y = fmaf(beta, old.y, v.y);
        }
        *p = __floats2bfloat162_rn(v.x, v.y);
    } else {
        float2 *p = reinterpret_cast<float2 *>(static_cast<float *>(c) + off);
        if (read_c) {
            const float2 old = *p;
            v.x = fmaf(beta, old.x, v.x);
            v.y = fmaf(beta, old.y, v.y);
        }
        *p = v;
    }
}

#endif  // CM__SM90A_DEVICE

// ------------------------------------------------------------------ the kernel
// BATCHED: matrix blockIdx.z of a strided batch (maps3d, stride_c); the single-matrix
// instantiation reads neither, so that its code is what it was before batches existed.
// PROMO > 0 (the 3xTF32 path): two-level accumulation. The wgmma accumulator restarts at the
// start of every block of K steps and is added into a second register set with ordinary FP32
// additions (round to nearest) at its end, because the tensor cores' own accumulation into a
// large accumulator drops low bits (bench/NOTES-gemm.md: 10x the FP32 error over long K without
// it). Needs 2 x BN/2 registers. With promo_big > 0, K is the three equal segments of the 3xTF32
// split (small x big, big x small, big x big: gemm_api.c): blocks are PROMO steps long in the
// first two, whose terms are ~2^-11 of the result so that their dropped bits do not matter, and
// promo_big steps long in the last, whose dropped bits are the error floor of the result (each
// block's error grows with its length). The first segments end on a block boundary, so the big
// products start a fresh accumulator. promo_big <= 0: PROMO-step blocks throughout.
// BT (bf16 only): B is MN-major in memory (K rows of N contiguous elements, ldb apart, as in an
// "NN" product) and is staged as it is, BN / 64 copies of 64 N x 64 K a stage, for wgmma's
// transposed-B form: no transposing pre-pass (sm90+pack) for it.
// AT (TF32 only): A is MN-major in memory (K rows of M contiguous floats, lda apart) and is
// staged as it is, kBM / 32 copies of 32 M x 32 K a stage (128-byte swizzle); each consumer
// thread loads its A fragments from there into registers (wgmma's register-A form, WgmmaRA),
// since the tensor cores read TF32 from shared memory K-major only. c_col (AT only): C is
// column-major, element (row, col) at row + col * ldc, so that the transposed problem C^T =
// B A^T of a caller whose B is the MN-major operand runs here too.
template <int BN, int STAGES, int IT, int MINB, bool BATCHED, int PROMO = 0, bool BT = false,
          bool AT = false>
__global__ void __launch_bounds__(Cfg<BN, STAGES, IT, MINB>::kThreads, MINB)
    gemm_kernel(const __grid_constant__ CUtensorMap tma_a, const __grid_constant__ CUtensorMap tma_b,
                void *__restrict__ c, long long ldc, int m, int n, int k, float alpha, float beta,
                int c_bf16, int c_vec, int maps3d, long long stride_c, int promo_big, int c_col) {
#ifdef CM__SM90A_DEVICE
    static_assert(!AT || (IT == kTf32 && PROMO == 0 && !BT && (BN == 128 || BN == 256)),
                  "AT: TF32, no promotion, a K-major B, BN 128 or 256");
    cm__pdl_launch_dependents(); // kernels/pdl.cuh
    using C = Cfg<BN, STAGES, IT, MINB>;
    extern __shared__ __align__(1024) uint8_t smem_raw[];
    const uint32_t base = (smem_u32(smem_raw) + 1023u) & ~1023u;
    const uint32_t a_base = base;
    const uint32_t b_base = base + STAGES * C::kABytes;
    const uint32_t full_bar = base + STAGES * C::kStageBytes;
    const uint32_t empty_bar = full_bar + STAGES * 8;

    // tile of this block, grouped raster: kGroupM row-blocks walk the columns together
    const int tiles_m = (m + kBM - 1) / kBM;
    const int tiles_n = (n + BN - 1) / BN;
    const int span = kGroupM * tiles_n;
    const int t = (int)blockIdx.x;
    const int g = t / span;
    const int first_m = g * kGroupM;
    const int rows_in_group = min(tiles_m - first_m, kGroupM);
    const int r = t - g * span;
    const int m0 = (first_m + r % rows_in_group) * kBM;
    const int n0 = (r / rows_in_group) * BN;
    const int k_steps = (k + C::kBK - 1) / C::kBK;

    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; ++s) {
            mbar_init(full_bar + 8 * s, 1);
            mbar_init(empty_bar + 8 * s, 256);
        }
        // make the initialised barriers visible to the copy engine (async proxy)
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    }
    __syncthreads();
    // launched as a dependent of the operand staging (CM__GEMM_SM90_DEPENDENT): its output
    // complete before the tensor copies read A and B (nothing otherwise)
    cm__pdl_wait();

    const int wg = (int)(threadIdx.x / 128);
    const bool producer = MINB == 1 ? wg == 0 : threadIdx.x >= 256;
    if (producer) {
        // ---------------- producer
        if (MINB == 1) asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(C::kProducerRegs));
        if (threadIdx.x == (MINB == 1 ? 0u : 256u)) {
            // maps3d: bit 0 A's map is 3-D, bit 1 B's (matrix z of the batch)
            const int z = (int)blockIdx.z;
            // PROMO (3xTF32): K is three segments of seg steps (small x big, big x small, big x
            // big) over operands that hold two (A = [small | big], B = [big | small]): the
            // third segment reads A's second and B's first
            const int seg = PROMO > 0 ? k_steps / 3 : k_steps;
            for (int i = 0; i < k_steps; ++i) {
                const int s = i % STAGES;
                const int ka = (PROMO > 0 && i >= 2 * seg ? i - seg : i) * C::kBK;
                const int kb = (PROMO > 0 && i >= 2 * seg ? i - 2 * seg : i) * C::kBK;
                if (i >= STAGES) mbar_wait(empty_bar + 8 * s, (uint32_t)((i / STAGES) - 1) & 1u);
                mbar_expect_tx(full_bar + 8 * s, (uint32_t)C::kStageBytes);
                if (AT) {
                    // kBM / 32 chunks of 32 M (the map's inner dimension) x kBK K rows, 4 KiB each
#pragma unroll
                    for (int j = 0; j < kBM / 32; ++j) {
                        const uint32_t dst = a_base + s * C::kABytes + j * C::kBK * kRowBytes;
                        if (BATCHED && (maps3d & 1))
                            tma_load_3d(dst, &tma_a, m0 + 32 * j, i * C::kBK, z, full_bar + 8 * s);
                        else
                            tma_load_2d(dst, &tma_a, m0 + 32 * j, i * C::kBK, full_bar + 8 * s);
                    }
                } else if (BATCHED && (maps3d & 1))
                    tma_load_3d(a_base + s * C::kABytes, &tma_a, ka, m0, z, full_bar + 8 * s);
                else
                    tma_load_2d(a_base + s * C::kABytes, &tma_a, ka, m0, full_bar + 8 * s);
                if (BT) {
                    // BN / 64 chunks of 64 N (the map's inner dimension) x kBK K rows
#pragma unroll
                    for (int j = 0; j < BN / 64; ++j) {
                        const uint32_t dst = b_base + s * C::kBBytes + j * 64 * kRowBytes;
                        if (BATCHED && (maps3d & 2))
                            tma_load_3d(dst, &tma_b, n0 + 64 * j, i * C::kBK, z, full_bar + 8 * s);
                        else
                            tma_load_2d(dst, &tma_b, n0 + 64 * j, i * C::kBK, full_bar + 8 * s);
                    }
                } else if (BATCHED && (maps3d & 2)) {
                    tma_load_3d(b_base + s * C::kBBytes, &tma_b, kb, n0, z, full_bar + 8 * s);
                } else {
                    tma_load_2d(b_base + s * C::kBBytes, &tma_b, kb, n0, full_bar + 8 * s);
                }
            }
        }
    } else {
        // ---------------- consumers
        if (MINB == 1) asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(C::kConsumerRegs));
        const int cw = MINB == 1 ? wg - 1 : wg;  // which 64 rows of the tile
        float acc[BN / 2];
        float tot[PROMO > 0 ? BN / 2 : 1];
#pragma unroll
        for (int i = 0; i < BN / 2; ++i) acc[i] = 0.0f;
#pragma unroll
        for (int i = 0; i < (PROMO > 0 ? BN / 2 : 1); ++i) tot[i] = 0.0f;

        if constexpr (AT) {
            // A fragments from the MN-major stage: row mt (and mt + 8) of the tile, K columns
            // t (and t + 4) of each 8-wide slice kk. In the stage, (m, k) lies in chunk m / 32
            // (kBK rows of 128 bytes), row k, 16-byte unit (m % 32 / 4) ^ (k % 8) (the 128-byte
            // swizzle), word m % 4; slice kk adds 8 rows (1024 bytes) and keeps k % 8.
            const int lane = (int)(threadIdx.x % 32);
            const int mt = cw * 64 + (int)((threadIdx.x / 32) % 4) * 16 + lane / 4;
            const int t = lane % 4;
            const uint32_t chunk = (uint32_t)(mt / 32) * C::kBK * kRowBytes;
            const uint32_t u = (uint32_t)(mt % 32) / 4, w4 = 4u * (uint32_t)(mt % 4);
            uint32_t a_off[4];
            a_off[0] = chunk + t * kRowBytes + ((u ^ t) << 4) + w4;
            a_off[1] = chunk + t * kRowBytes + (((u + 2) ^ t) << 4) + w4;
            a_off[2] = chunk + (t + 4) * kRowBytes + ((u ^ (t + 4)) << 4) + w4;
            a_off[3] = chunk + (t + 4) * kRowBytes + (((u + 2) ^ (t + 4)) << 4) + w4;
            // One register set per 8-wide K slice and one wgmma group per slice, at most two
            // groups in flight: slice kk + 1's registers (at the last slice, the next step's
            // first) are loaded while slice kk - 1's group may still run, into a set that no
            // running group reads. Step i - 1's stage is free once its last group is done:
            // after the wait that follows step i's second slice. (ptxas serialises the wgmmas
            // when registers a group in flight might read are written: C7513.)
            constexpr int kSlices = C::kBK / C::kKW;
            static_assert(kSlices > 2, "a slice's registers are rewritten two groups later");
            uint32_t fa[kSlices][4];
            mbar_wait(full_bar, 0u);
#pragma unroll
            for (int r = 0; r < 4; ++r) fa[0][r] = lds32(a_base + a_off[r]);
            for (int i = 0; i < k_steps; ++i) {
                const int s = i % STAGES;
                const uint32_t ab = a_base + s * C::kABytes;
                const bool has_next = i + 1 < k_steps;
                // the last step loads its own first slice again (unused) instead of waiting
                const uint32_t abn = has_next ? a_base + ((i + 1) % STAGES) * C::kABytes : ab;
                const uint64_t db = smem_desc(b_base + s * C::kBBytes);
#pragma unroll
                for (int kk = 0; kk < kSlices; ++kk) {
                    if (kk + 1 < kSlices) {
#pragma unroll
                        for (int r = 0; r < 4; ++r)
                            fa[kk + 1][r] = lds32(ab + a_off[r] + (kk + 1) * 8 * kRowBytes);
                    } else {
                        if (has_next)
                            mbar_wait(full_bar + 8 * ((i + 1) % STAGES),
                                      (uint32_t)((i + 1) / STAGES) & 1u);
#pragma unroll
                        for (int r = 0; r < 4; ++r) fa[0][r] = lds32(abn + a_off[r]);
                    }
                    wgmma_fence();
                    WgmmaRA<BN>::mma(acc, fa[kk], db + 2 * kk, 1);
                    wgmma_commit();
                    wgmma_wait<2>();
                    if (kk == 1 && i > 0) mbar_arrive(empty_bar + 8 * ((i - 1) % STAGES));
                }
            }
        } else {
        // PROMO: the step where the last segment (big x big) starts; blocks are PROMO steps
        // from step 0 before it and promo_big steps (a power of two) from it on
        const int big_from = PROMO > 0 && promo_big > 0 ? 2 * (k_steps / 3) : k_steps;
        const int big_mask = promo_big > 0 ? promo_big - 1 : 0;
        for (int i = 0; i < k_steps; ++i) {
            const int s = i % STAGES;
            mbar_wait(full_bar + 8 * s, (uint32_t)(i / STAGES) & 1u);
            const uint64_t da = smem_desc(a_base + s * C::kABytes + cw * 64 * kRowBytes);
            const uint64_t db = BT ? smem_desc_mn(b_base + s * C::kBBytes)
                                   : smem_desc(b_base + s * C::kBBytes);
            wgmma_fence();
            // PROMO: the first wgmma of a block starts the accumulator afresh
            const int fresh = PROMO > 0 && (i < big_from ? i % (PROMO > 0 ? PROMO : 1) == 0
                                                         : ((i - big_from) & big_mask) == 0);
#pragma unroll
            for (int kk = 0; kk < C::kBK / C::kKW; ++kk) {
                // K offset kk * kKW elements: in a K-major tile kk * 32 bytes along the row = 2
                // units of the address field; in the MN-major B kk * 16 rows of 128 bytes = 128
                Wgmma<BN, IT, BT>::mma(acc, da + 2 * kk, db + (BT ? 128 : 2) * kk,
                                       kk > 0 || !fresh ? 1 : 0);
            }
            wgmma_commit();
            const int last =
                i + 1 == k_steps ||
                (i < big_from ? (i + 1) % (PROMO > 0 ? PROMO : 1) == 0 || i + 1 == big_from
                              : ((i + 1 - big_from) & big_mask) == 0);
            if (PROMO > 0 && last) {
                wgmma_wait<0>();  // the block's products are in acc: add them to tot
#pragma unroll
                for (int j = 0; j < (PROMO > 0 ? BN / 2 : 1); ++j) tot[j] += acc[j];
            } else {
                wgmma_wait<1>();  // step i-1's group is done: its stage can be refilled
            }
            if (i > 0) mbar_arrive(empty_bar + 8 * ((i - 1) % STAGES));
        }
        }  // AT
        wgmma_wait<0>();
        if (PROMO > 0) {
#pragma unroll
            for (int j = 0; j < (PROMO > 0 ? BN / 2 : 1); ++j) acc[j] = tot[j];
        }

        // ---------------- epilogue: acc[4j + 2h + e] is row 16*warp + lane/4 + 8h,
        // column 8j + 2*(lane%4) + e of this warpgroup's 64 x BN block
        const int warp = (int)((threadIdx.x / 32) % 4);
        const int lane = (int)(threadIdx.x % 32);
        const int row_base = m0 + cw * 64 + warp * 16 + lane / 4;
        const int col_base = n0 + 2 * (lane % 4);
        const bool read_c = beta != 0.0f;
        const long long c0 = BATCHED ? (long long)blockIdx.z * stride_c : 0;  // matrix z
        if (AT && c_col) {
            // column-major C: the 8 rows of a store's lanes with one column are contiguous
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const int row = row_base + 8 * h;
                if (row >= m) continue;
#pragma unroll
                for (int j = 0; j < BN / 8; ++j)
#pragma unroll
                    for (int e = 0; e < 2; ++e) {
                        const int col = col_base + 8 * j + e;
                        if (col >= n) continue;
                        store_one(c, c0 + row + (long long)col * ldc,
                                  alpha * acc[4 * j + 2 * h + e], c_bf16, read_c, beta);
                    }
            }
            return;
        }
        if constexpr (IT == kBf16) {  // the BF16 kernels only (TF32 ones keep their code)
            if (c_vec == 2 && c_bf16 && !read_c) {
                // BF16 C whose rows start on 16 bytes (c_vec 2: ldc and the batch stride
                // multiples of 8, C 16-byte aligned), beta 0: the four lanes of a quad (one row;
                // lane q holds columns 8j + 2q, + 1 of every j) exchange their packed pairs of
                // four consecutive j (a 4 x 4 transpose by three shuffles) so that lane q stores
                // the whole 16 bytes of j = 4g + q: a warp's store 8 rows of 64 contiguous bytes,
                // whole sectors, a quarter of the pair stores' count (a warp's pair store: 8 rows
                // of 16 bytes, half sectors). The shuffles run on every lane (rows past m store
                // nothing).
                const int q = lane % 4;
                auto sel = [](const uint32_t (&x)[4], int i) {
                    return i == 0 ? x[0] : i == 1 ? x[1] : i == 2 ? x[2] : x[3];
                };
#pragma unroll
                for (int h = 0; h < 2; ++h) {
                    const int row = row_base + 8 * h;
                    const long long roff = c0 + (long long)row * ldc;
#pragma unroll
                    for (int g = 0; g < BN / 32; ++g) {
                        uint32_t x[4], r[4];
#pragma unroll
                        for (int t = 0; t < 4; ++t) {
                            const int j = 4 * g + t;
                            const __nv_bfloat162 p2 = __floats2bfloat162_rn(
                                alpha * acc[4 * j + 2 * h], alpha * acc[4 * j + 2 * h + 1]);
                            x[t] = *reinterpret_cast<const uint32_t *>(&p2);
                        }
                        r[0] = sel(x, q);
#pragma unroll
                        for (int s = 1; s < 4; ++s)
                            r[s] = __shfl_xor_sync(0xffffffffu, sel(x, q ^ s), s);
                        // r[s] is lane q ^ s's pair of j = 4g + q: columns 8j + 2 (q ^ s), + 1
                        const uint32_t y[4] = {sel(r, q), sel(r, 1 ^ q), sel(r, 2 ^ q),
                                               sel(r, 3 ^ q)};
                        const int col = n0 + 8 * (4 * g + q);
                        if (row >= m || col >= n) continue;
                        __nv_bfloat16 *const crow = static_cast<__nv_bfloat16 *>(c) + roff;
                        if (col + 8 <= n) {
                            *reinterpret_cast<uint4 *>(crow + col) =
                                make_uint4(y[0], y[1], y[2], y[3]);
                        } else {
#pragma unroll
                            for (int t = 0; t < 4; ++t) {
                                const int cc = col + 2 * t;
                                if (cc + 1 < n)
                                    *reinterpret_cast<uint32_t *>(crow + cc) = y[t];
                                else if (cc < n)
                                    *reinterpret_cast<uint16_t *>(crow + cc) =
                                        (uint16_t)(y[t] & 0xffffu);
                            }
                        }
                    }
                }
                return;
            }
        }
        if (c_vec) {
            // Every row of C starts on an even element (ldc even, C aligned): each thread stores
            // its fragment pairs where they lie, one 8-byte (FP32) or 4-byte (BF16) store a
            // pair, a warp's store 8 rows of 32 or 16 bytes: whole 32-byte sectors already, so
            // the staging below would only add its shared-memory round trip a row.
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const int row = row_base + 8 * h;
                if (row >= m) continue;
                const long long roff = c0 + (long long)row * ldc;
#pragma unroll
                for (int j = 0; j < BN / 8; ++j) {
                    const int col = col_base + 8 * j;
                    if (col >= n) continue;
                    const float2 v = make_float2(alpha * acc[4 * j + 2 * h],
                                                 alpha * acc[4 * j + 2 * h + 1]);
                    store_pair(c, roff + col, v, col + 1 < n, c_bf16, read_c, beta);
                }
            }
            return;
        }
        // Rows that start on odd elements (odd ldc or batch stride, or C one element off): as
        // the fragments lie, every other row would take two 4-byte stores a pair, a warp's
        // store 8 rows of 16 bytes. Instead each warp stages its 16 rows x 64 columns at a
        // time (alpha applied) in a buffer of its own and writes them a row at a time, the
        // warp's 32 lanes on consecutive columns (a 128- or 256-byte run a store). The stage
        // ring is free once every consumer's groups are done (the named barrier): the producer
        // issues nothing after the last step, whose copies the consumers have waited for.
        consumer_sync();
        float *const epi = reinterpret_cast<float *>(smem_raw + (base - smem_u32(smem_raw))) +
                           (cw * 4 + warp) * kEpiWarpFloats;
        const uintptr_t esize = c_bf16 ? 2 : 4;
#pragma unroll
        for (int cc = 0; cc < BN / 64; ++cc) {
            __syncwarp();
#pragma unroll
            for (int jj = 0; jj < 8; ++jj)
#pragma unroll
                for (int h = 0; h < 2; ++h) {
                    const int j = 8 * cc + jj;
                    float2 *d = reinterpret_cast<float2 *>(
                        epi + (lane / 4 + 8 * h) * kEpiPitch + 8 * jj + 2 * (lane % 4));
                    *d = make_float2(alpha * acc[4 * j + 2 * h], alpha * acc[4 * j + 2 * h + 1]);
                }
            __syncwarp();
            const int col0 = n0 + 64 * cc;
            if (col0 >= n) continue;
            for (int r = 0; r < 16; ++r) {
                const int row = m0 + cw * 64 + warp * 16 + r;
                if (row >= m) break;
                const long long roff = c0 + (long long)row * ldc;
                const float *src = epi + r * kEpiPitch;
                // the columns are even, so a pair shares the row's alignment: pairs on the
                // rows that start on an even element
                if (((uintptr_t)c / esize + (uintptr_t)roff) % 2 == 0) {
                    const int col = col0 + 2 * lane;
                    if (col >= n) continue;
                    float2 v = *reinterpret_cast<const float2 *>(src + 2 * lane);
                    store_pair(c, roff + col, v, col + 1 < n, c_bf16, read_c, beta);
                } else {
#pragma unroll
                    for (int e = 0; e < 2; ++e) {
                        const int col = col0 + lane + 32 * e;
                        if (col < n) store_one(c, roff + col, src[lane + 32 * e], c_bf16, read_c,
                                               beta);
                    }
                }
            }
        }
    }
#else
    (void)tma_a; (void)tma_b; (void)c; (void)ldc; (void)m; (void)n; (void)k;
    (void)alpha; (void)beta; (void)c_bf16; (void)c_vec; (void)maps3d; (void)stride_c;
    (void)promo_big; (void)c_col;
#endif
}

// ------------------------------------------------------------------ host side

// cuTensorMapEncodeTiled through the runtime's driver entry point (no link against libcuda).
static PFN_cuTensorMapEncodeTiled_v12000 encode_fn() {
    static const PFN_cuTensorMapEncodeTiled_v12000 fn = [] {
        void *p = nullptr;
        cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
        if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000, cudaEnableDefault,
                                             &q) != cudaSuccess ||
            q != cudaDriverEntryPointSuccess)
            p = nullptr;
        return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(p);
    }();
    return fn;
}

// Tensor map of a rows x cols (cols contiguous, ld elements apart) matrix, box of
// box_rows x (128 bytes of cols), 128-byte swizzle, zero fill out of bounds. batch > 1: a 3-D
// map of `batch` such matrices `stride` elements apart (box depth 1), the kernel's 3-D copy.
static bool encode_operand(CUtensorMap *map, CUtensorMapDataType dt, size_t elem, const void *ptr,
                           int rows, int cols, int64_t ld, int box_rows, int batch = 1,
                           int64_t stride = 0) {
    PFN_cuTensorMapEncodeTiled_v12000 fn = encode_fn();
    if (fn == nullptr) return false;
    const cuuint32_t rank = batch > 1 ? 3 : 2;
    const cuuint64_t dims[3] = {(cuuint64_t)cols, (cuuint64_t)rows, (cuuint64_t)batch};
    const cuuint64_t strides[2] = {(cuuint64_t)ld * elem, (cuuint64_t)stride * elem};
    const cuuint32_t box[3] = {(cuuint32_t)(kRowBytes / elem), (cuuint32_t)box_rows, 1};
    const cuuint32_t estr[3] = {1, 1, 1};
    return fn(map, dt, rank, const_cast<void *>(ptr), dims, strides, box, estr,
              CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
              CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

// Whether device `dev` (the current one) runs kernel `fn`: compute capability 9.0 and an image
// of it.
template <typename F>
static cudaError_t device_ok(F *fn, int dev) {
    int major = 0, minor = 0;
    cudaError_t e;
    if ((e = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev)) != cudaSuccess)
        return e;
    if ((e = cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev)) != cudaSuccess)
        return e;
    if (major != 9 || minor != 0) return cudaErrorNotSupported;
    cudaFuncAttributes attr;
    memset(&attr, 0, sizeof attr);
    if (cudaFuncGetAttributes(&attr, fn) != cudaSuccess) {
        (void)cudaGetLastError();
        return cudaErrorNotSupported;
    }
    if (attr.binaryVersion != 90) return cudaErrorNotSupported;
    return cudaSuccess;
}

// The TF32 operands' tensor-map type. TFLOAT32: the copy engine rounds each float to tf32 on
// the way into shared memory (on the H200: relative error 2.6e-4 against float64, and C
// bit-identical to cuBLAS's CUBLAS_COMPUTE_32F_FAST_TF32 at 4096^3 and 8192^3). FLOAT32 would
// leave the rounding to the tensor cores, which drop the low 13 mantissa bits: 6.9e-4, over the
// 5e-4 bound. A variable only so that the harness can time the other one.
static CUtensorMapDataType g_tf32_map_type = CU_TENSOR_MAP_DATA_TYPE_TFLOAT32;

// The 3xTF32 kernel (CM__GEMM_SM90_TF32X3): the wgmma accumulator is added into the FP32 one
// every kPromoSteps K steps (kPromoSteps x 32 = 256 K elements) in the split's two cross-term
// segments, every kPromoBigSteps (64 K elements) in its big x big segment. Two is the error /
// speed balance measured on the H200 (bench/NOTES-gemm.md); CUDAMODEL_GEMM_3X_PROMO (a power of
// two from 1 to 64 steps, read once per process) overrides it, for that measurement.
constexpr int kPromoSteps = 8;
constexpr int kPromoBigSteps = 2;

static int promo_big_steps() {
    static const int steps = [] {
        const char *v = getenv("CUDAMODEL_GEMM_3X_PROMO");
        const int n = v != nullptr ? atoi(v) : 0;
        return n >= 1 && n <= 64 && (n & (n - 1)) == 0 ? n : kPromoBigSteps;
    }();
    return steps;
}

// Launch one configuration on `batch` matrices (1 .. CM__GEMM_MAX_BATCH_PER_LAUNCH), matrix z
// at a + z * sa, b + z * sb, c + z * sc elements (the caller has checked the operands with
// cm__gemm_sm90_batched_supported()).
// AT: A is MN-major (K rows of M, lda >= m); c_col: C is column-major (read by AT kernels only).
template <int BN, int STAGES, int IT, int MINB, int PROMO = 0, bool BT = false, bool AT = false>
static cudaError_t launch_batch(int c_bf16, int m, int n, int k, float alpha, const void *a,
                                int64_t lda, const void *b, int64_t ldb, float beta, void *c,
                                int64_t ldc, int batch, int64_t sa, int64_t sb, int64_t sc,
                                cudaStream_t stream, bool pdl, int c_col = 0) {
    using Cf = Cfg<BN, STAGES, IT, MINB>;
    static_assert(!BT || (IT == kBf16 && BN % 64 == 0 && PROMO == 0), "BT: bf16, BN of 64s");
    static_assert(!AT || (IT == kTf32 && PROMO == 0 && !BT), "AT: TF32");
    auto kern1 = gemm_kernel<BN, STAGES, IT, MINB, false, PROMO, BT, AT>;
    auto kernz = gemm_kernel<BN, STAGES, IT, MINB, true, PROMO, BT, AT>;
    // once per device: whether it runs the kernel (remembered either way) and, if so, the
    // kernels' dynamic shared-memory limit raised (single matrix and batch)
    static cm__once_per_device once;
    cudaError_t e = cm__prepare_once(once, [kern1, kernz](int dev) {
        const cudaError_t ok = device_ok(kern1, dev);
        if (ok != cudaSuccess) return ok;
        const cudaError_t e1 =
            cudaFuncSetAttribute(kern1, cudaFuncAttributeMaxDynamicSharedMemorySize, Cf::kSmem);
        if (e1 != cudaSuccess) return e1;
        return cudaFuncSetAttribute(kernz, cudaFuncAttributeMaxDynamicSharedMemorySize, Cf::kSmem);
    });
    if (e != cudaSuccess) return e;
    const CUtensorMapDataType dt = IT == kBf16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : g_tf32_map_type;
    if (batch < 1) batch = 1;
    // an operand the whole batch shares (stride 0) keeps the 2-D map, as a single matrix does
    const int a3 = batch > 1 && sa != 0, b3 = batch > 1 && sb != 0;
    alignas(64) CUtensorMap ta;
    alignas(64) CUtensorMap tb;
    // A: M rows of K (box kBM x 128 bytes of K), or AT: K rows of M (box kBK x 128 bytes of M);
    // B: N rows of K (box BN x 128 bytes of K), or BT: K rows of N (box kBK x 128 bytes of N)
    // PROMO (3xTF32): the operands hold two of the product's three K segments (the kernel's
    // producer reads the third from them)
    const int kop = PROMO > 0 ? 2 * (k / 3) : k;
    if (!(AT ? encode_operand(&ta, dt, Cf::kElem, a, k, m, lda, Cf::kBK, a3 ? batch : 1, sa)
             : encode_operand(&ta, dt, Cf::kElem, a, m, kop, lda, kBM, a3 ? batch : 1, sa)) ||
        !(BT ? encode_operand(&tb, dt, Cf::kElem, b, k, n, ldb, Cf::kBK, b3 ? batch : 1, sb)
             : encode_operand(&tb, dt, Cf::kElem, b, n, kop, ldb, BN, b3 ? batch : 1, sb)))
        return cudaErrorNotSupported;
    const long long tiles = (long long)((m + kBM - 1) / kBM) * ((n + BN - 1) / BN);
    const size_t celem = c_bf16 ? 2 : 4;
    const long long stride_c = batch > 1 ? (long long)sc : 0;
    // pairs of C elements in one store: every matrix's rows start at even elements (1); BF16
    // rows that start on 16 bytes (2: the epilogue's 16-byte stores)
    const int c_vec16 =
        c_bf16 && (ldc % 8 == 0) && (stride_c % 8 == 0) && ((uintptr_t)c % 16 == 0);
    const int c_vec = c_vec16 ? 2
                      : (ldc % 2 == 0) && (stride_c % 2 == 0) && ((uintptr_t)c % (2 * celem) == 0);
    const dim3 grid((unsigned)tiles, 1, (unsigned)batch);
    return cm__pdl_launch(pdl, batch > 1 ? kernz : kern1, grid, dim3(Cf::kThreads), Cf::kSmem,
                          stream, ta, tb, c, (long long)ldc, m, n, k, alpha, beta, c_bf16, c_vec,
                          a3 | (b3 << 1), stride_c, PROMO > 0 ? promo_big_steps() : 0, c_col);
}

// One matrix (bench/gemm_sm90_harness.cu times the configurations through this form).
template <int BN, int STAGES, int IT, int MINB>
static cudaError_t launch(int c_bf16, int m, int n, int k, float alpha, const void *a, int64_t lda,
                          const void *b, int64_t ldb, float beta, void *c, int64_t ldc,
                          cudaStream_t stream) {
    return launch_batch<BN, STAGES, IT, MINB>(c_bf16, m, n, k, alpha, a, lda, b, ldb, beta, c,
                                              ldc, 1, 0, 0, 0, stream, false);
}

// Its tile is 128 x 192: 96 + 96 accumulator registers a consumer thread fit the 232 of
// setmaxnreg (128 x 256 would need 256). Measured on the H200 against 128 x 128 with the same
// promotion: 2.09-2.19x cublasSgemm at 4096^3 / 8192^3 against 1.70-1.73x (bench/NOTES-gemm.md).

}  // namespace cm__sm90

extern "C" int cm__gemm_sm90_batched_supported(int in_type, int c_bf16, int m, int n, int k,
                                               const void *a, int64_t lda, const void *b,
                                               int64_t ldb, const void *c, int64_t ldc, int batch,
                                               int64_t stride_a, int64_t stride_b,
                                               int64_t stride_c) {
    if (in_type != CM__GEMM_SM90_BF16 && in_type != CM__GEMM_SM90_TF32 &&
        in_type != CM__GEMM_SM90_TF32X3 && in_type != CM__GEMM_SM90_BF16_BT &&
        in_type != CM__GEMM_SM90_TF32_AT && in_type != CM__GEMM_SM90_TF32_AT_CC)
        return 0;
    if (in_type == CM__GEMM_SM90_TF32X3 && c_bf16) return 0;
    if (c_bf16 != 0 && c_bf16 != 1) return 0;
    if (m < 1 || n < 1 || k < 1 || a == nullptr || b == nullptr || c == nullptr) return 0;
    const bool bt = in_type == CM__GEMM_SM90_BF16_BT;  // B: K rows of N (ldb >= n)
    // A: K rows of M (lda >= m); CC: C column-major (ldc >= m)
    const bool at = in_type == CM__GEMM_SM90_TF32_AT || in_type == CM__GEMM_SM90_TF32_AT_CC;
    const bool cc = in_type == CM__GEMM_SM90_TF32_AT_CC;
    const bool x3 = in_type == CM__GEMM_SM90_TF32X3;  // A, B: two segments of k / 3 a row
    if (x3 && k % 96 != 0) return 0;
    const int64_t kop = x3 ? 2 * (int64_t)(k / 3) : k;  // the operands' K
    const int64_t elem = in_type == CM__GEMM_SM90_BF16 || bt ? 2 : 4;
    const int64_t celem = c_bf16 ? 2 : 4;
    if ((uintptr_t)a % 16 != 0 || (uintptr_t)b % 16 != 0 || (uintptr_t)c % (uintptr_t)celem != 0)
        return 0;
    const int64_t max_ld = ((int64_t)1 << 40) / 4;  // strides below 2^40 bytes
    if (lda < (at ? m : kop) || ldb < (bt ? n : kop) || ldc < (cc ? m : n) || lda >= max_ld ||
        ldb >= max_ld || ldc >= max_ld)
        return 0;
    if ((lda * elem) % 16 != 0 || (ldb * elem) % 16 != 0) return 0;
    const long long tiles = (long long)((m + cm__sm90::kBM - 1) / cm__sm90::kBM) * ((n + 127) / 128);
    if (tiles > INT_MAX) return 0;
    if (batch > 1) {
        // the 3-D maps' batch strides: bytes a multiple of 16 and below 2^40 (0: shared operand)
        if (stride_a < 0 || stride_b < 0 || stride_c < 0) return 0;
        if (stride_a >= max_ld || stride_b >= max_ld) return 0;
        if ((stride_a * elem) % 16 != 0 || (stride_b * elem) % 16 != 0) return 0;
    }
    return 1;
}

extern "C" cudaError_t cm__gemm_sm90_batched(int in_type, int c_bf16, int m, int n, int k,
                                             float alpha, const void *a, int64_t lda,
                                             const void *b, int64_t ldb, float beta, void *c,
                                             int64_t ldc, int batch, int64_t stride_a,
                                             int64_t stride_b, int64_t stride_c,
                                             cudaStream_t stream) {
    using namespace cm__sm90;
    const bool pdl = (in_type & CM__GEMM_SM90_DEPENDENT) != 0;
    in_type &= ~CM__GEMM_SM90_DEPENDENT;
    if (!cm__gemm_sm90_batched_supported(in_type, c_bf16, m, n, k, a, lda, b, ldb, c, ldc, batch,
                                         stride_a, stride_b, stride_c))
        return cudaErrorNotSupported;
    if (batch < 1) batch = 1;
    const int64_t elem =
        in_type == CM__GEMM_SM90_BF16 || in_type == CM__GEMM_SM90_BF16_BT ? 2 : 4;
    // BF16 / TF32 (bf16 with an MN-major B too): a grid of 128 x 256 tiles that fills at most
    // half of the multiprocessors runs 128 x 128 tiles instead, twice the blocks, each half the
    // work (bf16 1024^3: 32 blocks of 128 x 256 on 132 multiprocessors ran 0.68x cuBLAS; 128 x
    // 128 tiles lose to 128 x 256 where both fill the GPU: 0.90x against 1.00x at 4096^3,
    // NOTES-gemm-sm90)
    int sms = 0, dev = 0;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess)
        return cudaErrorNotSupported;
    const long long wide = (long long)((m + kBM - 1) / kBM) * ((n + 255) / 256) * batch;
    const bool narrow = 2 * wide <= (long long)sms;
    const int64_t celem = c_bf16 ? 2 : 4;
    // one launch per CM__GEMM_MAX_BATCH_PER_LAUNCH matrices (gridDim.z), in order
    for (int z0 = 0; z0 < batch; z0 += CM__GEMM_MAX_BATCH_PER_LAUNCH) {
        const int nb = batch - z0 < CM__GEMM_MAX_BATCH_PER_LAUNCH ? batch - z0
                                                                  : CM__GEMM_MAX_BATCH_PER_LAUNCH;
        const void *az = static_cast<const char *>(a) + (int64_t)z0 * stride_a * elem;
        const void *bz = static_cast<const char *>(b) + (int64_t)z0 * stride_b * elem;
        void *cz = static_cast<char *>(c) + (int64_t)z0 * stride_c * celem;
        cudaError_t e;
        if (in_type == CM__GEMM_SM90_BF16 && narrow)
            e = launch_batch<128, 6, kBf16, 1>(c_bf16, m, n, k, alpha, az, lda, bz, ldb, beta, cz,
                                               ldc, nb, stride_a, stride_b, stride_c, stream, pdl);
        else if (in_type == CM__GEMM_SM90_BF16)
            e = launch_batch<256, 4, kBf16, 1>(c_bf16, m, n, k, alpha, az, lda, bz, ldb, beta, cz,
                                               ldc, nb, stride_a, stride_b, stride_c, stream, pdl);
        else if (in_type == CM__GEMM_SM90_BF16_BT && narrow)
            e = launch_batch<128, 6, kBf16, 1, 0, true>(c_bf16, m, n, k, alpha, az, lda, bz, ldb,
                                                        beta, cz, ldc, nb, stride_a, stride_b,
                                                        stride_c, stream, pdl);
        else if (in_type == CM__GEMM_SM90_BF16_BT)
            e = launch_batch<256, 4, kBf16, 1, 0, true>(c_bf16, m, n, k, alpha, az, lda, bz, ldb,
                                                        beta, cz, ldc, nb, stride_a, stride_b,
                                                        stride_c, stream, pdl);
        else if (in_type == CM__GEMM_SM90_TF32_AT || in_type == CM__GEMM_SM90_TF32_AT_CC)
            e = narrow ? launch_batch<128, 6, kTf32, 1, 0, false, true>(
                             c_bf16, m, n, k, alpha, az, lda, bz, ldb, beta, cz, ldc, nb,
                             stride_a, stride_b, stride_c, stream, pdl,
                             in_type == CM__GEMM_SM90_TF32_AT_CC)
                       : launch_batch<256, 4, kTf32, 1, 0, false, true>(
                             c_bf16, m, n, k, alpha, az, lda, bz, ldb, beta, cz, ldc, nb,
                             stride_a, stride_b, stride_c, stream, pdl,
                             in_type == CM__GEMM_SM90_TF32_AT_CC);
        else if (in_type == CM__GEMM_SM90_TF32 && narrow)
            e = launch_batch<128, 6, kTf32, 1>(c_bf16, m, n, k, alpha, az, lda, bz, ldb, beta, cz,
                                               ldc, nb, stride_a, stride_b, stride_c, stream, pdl);
        else if (in_type == CM__GEMM_SM90_TF32)
            e = launch_batch<256, 4, kTf32, 1>(c_bf16, m, n, k, alpha, az, lda, bz, ldb, beta, cz,
                                               ldc, nb, stride_a, stride_b, stride_c, stream, pdl);
        else
            e = launch_batch<192, 5, kTf32, 1, kPromoSteps>(c_bf16, m, n, k, alpha, az, lda, bz,
                                                            ldb, beta, cz, ldc, nb, stride_a,
                                                            stride_b, stride_c, stream, pdl);
        if (e != cudaSuccess) return e;
    }
    return cudaSuccess;
}
