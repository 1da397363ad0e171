// Experiments for #3 (pool), #5 (graph replay), #6 (vector add / sum variants). Standalone.
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <vector>
#include <algorithm>
#include <chrono>
#include <cub/cub.cuh>
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); exit(1); } } while (0)
static double now_us() { return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch()).count(); }
static double med(std::vector<double> v) { std::sort(v.begin(), v.end()); return v[v.size() / 2]; }

// ---------------------------------------------------------------- pool
static void pool_exp() {
    cudaStream_t s; CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    cudaMemPool_t def, own; CK(cudaDeviceGetDefaultMemPool(&def, 0));
    unsigned long long mx = ~0ull; CK(cudaMemPoolSetAttribute(def, cudaMemPoolAttrReleaseThreshold, &mx));
    cudaMemPoolProps pp = {}; pp.allocType = cudaMemAllocationTypePinned; pp.location.type = cudaMemLocationTypeDevice; pp.location.id = 0;
    CK(cudaMemPoolCreate(&own, &pp)); CK(cudaMemPoolSetAttribute(own, cudaMemPoolAttrReleaseThreshold, &mx));
    const int P = 2000; const size_t B = 1 << 20;
    auto run = [&](int w) { double t0 = now_us(); for (int i = 0; i < P; ++i) { void *p;
            if (w == 0) CK(cudaMallocAsync(&p, B, s)); else if (w == 1) CK(cudaMallocFromPoolAsync(&p, B, def, s)); else CK(cudaMallocFromPoolAsync(&p, B, own, s));
            CK(cudaFreeAsync(p, s)); } CK(cudaStreamSynchronize(s)); return (now_us() - t0) / P; };
    std::vector<double> r[3];
    for (int w = 0; w < 3; ++w) run(w);
    for (int round = 0; round < 9; ++round) for (int w = 0; w < 3; ++w) { std::vector<double> v; for (int k = 0; k < 5; ++k) v.push_back(run(w)); r[w].push_back(med(v)); }
    printf("POOL us/pair: mallocAsync(default) %.3f  fromPool(default) %.3f  fromPool(own) %.3f\n", med(r[0]), med(r[1]), med(r[2]));
    CK(cudaMemPoolDestroy(own)); CK(cudaStreamDestroy(s));
}

// ---------------------------------------------------------------- graph
__global__ void k_empty() {}
__global__ void k_tick(unsigned *c) { if (threadIdx.x == 0) atomicAdd(c, 1u); }
__global__ void k_store(unsigned *c, unsigned i) { if (threadIdx.x == 0) c[i] = i + 1; }
__global__ void k_tick_pdl(unsigned *c) {
    asm volatile("griddepcontrol.wait;" ::: "memory");
    if (threadIdx.x == 0) atomicAdd(c, 1u);
    asm volatile("griddepcontrol.launch_dependents;");
}
static void issue(int w, unsigned *c, cudaStream_t s) {
    for (int i = 0; i < 100; ++i) {
        if (w == 0) k_empty<<<1, 32, 0, s>>>();
        else if (w == 1) k_tick<<<1, 32, 0, s>>>(c);
        else if (w == 2) k_store<<<1, 32, 0, s>>>(c, i);
        else {
            cudaLaunchConfig_t cfg = {}; cfg.gridDim = 1; cfg.blockDim = 32; cfg.stream = s;
            cudaLaunchAttribute at[1]; at[0].id = cudaLaunchAttributeProgrammaticStreamSerialization; at[0].val.programmaticStreamSerializationAllowed = 1;
            cfg.attrs = at; cfg.numAttrs = 1; CK(cudaLaunchKernelEx(&cfg, k_tick_pdl, c));
        }
    }
}
static void graph_exp() {
    cudaStream_t s; CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    unsigned *c; CK(cudaMalloc(&c, 4096)); CK(cudaMemset(c, 0, 4096));
    cudaEvent_t e0, e1; CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
    const char *names[4] = {"empty", "atomic tick", "store", "tick+PDL"};
    for (int w = 0; w < 4; ++w) {
        cudaGraph_t g; cudaGraphExec_t ge;
        CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal)); issue(w, c, s); CK(cudaStreamEndCapture(s, &g));
        CK(cudaGraphInstantiate(&ge, g, 0));
        std::vector<double> dr, gr;
        for (int rep = 0; rep < 25; ++rep) {
            float ms;
            CK(cudaEventRecord(e0, s)); issue(w, c, s); CK(cudaEventRecord(e1, s)); CK(cudaEventSynchronize(e1)); CK(cudaEventElapsedTime(&ms, e0, e1)); if (rep >= 3) dr.push_back(ms * 10.0);
            CK(cudaEventRecord(e0, s)); CK(cudaGraphLaunch(ge, s)); CK(cudaEventRecord(e1, s)); CK(cudaEventSynchronize(e1)); CK(cudaEventElapsedTime(&ms, e0, e1)); if (rep >= 3) gr.push_back(ms * 10.0);
        }
        printf("GRAPH %-12s direct %.3f us/launch, replay %.3f us/launch, ratio %.2f\n", names[w], med(dr), med(gr), med(dr) / med(gr));
        CK(cudaGraphExecDestroy(ge)); CK(cudaGraphDestroy(g));
    }
    CK(cudaFree(c)); CK(cudaStreamDestroy(s));
}

// ---------------------------------------------------------------- vector add variants
template <int U, bool STREAMING>
__global__ void __launch_bounds__(256) k_add(float *out, const float *a, const float *b, size_t head, size_t nvec, size_t n) {
    const size_t tid = (size_t)blockIdx.x * blockDim.x + threadIdx.x, stride = (size_t)gridDim.x * blockDim.x;
    if (tid < head) out[tid] = a[tid] + b[tid];
    size_t tail = head + nvec * 4; if (tid < n - tail) out[tail + tid] = a[tail + tid] + b[tail + tid];
    float4 *o = (float4 *)(out + head); const float4 *av = (const float4 *)(a + head), *bv = (const float4 *)(b + head);
    size_t v = tid;
    for (; v + (U - 1) * stride < nvec; v += U * stride) {
        float4 ra[U], rb[U];
#pragma unroll
        for (int k = 0; k < U; ++k) { if (STREAMING) { ra[k] = __ldcs(av + v + k * stride); rb[k] = __ldcs(bv + v + k * stride); } else { ra[k] = av[v + k * stride]; rb[k] = bv[v + k * stride]; } }
#pragma unroll
        for (int k = 0; k < U; ++k) { float4 r = make_float4(ra[k].x + rb[k].x, ra[k].y + rb[k].y, ra[k].z + rb[k].z, ra[k].w + rb[k].w); if (STREAMING) __stcs(o + v + k * stride, r); else o[v + k * stride] = r; }
    }
    for (; v < nvec; v += stride) { float4 x = av[v], y = bv[v]; o[v] = make_float4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w); }
}
// non-persistent: one float4 per thread per input, grid covers all
__global__ void k_add_flat(float *out, const float *a, const float *b, size_t head, size_t nvec, size_t n) {
    const size_t v = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (v < head) out[v] = a[v] + b[v];
    size_t tail = head + nvec * 4; if (v < n - tail) out[tail + v] = a[tail + v] + b[tail + v];
    if (v < nvec) { float4 x = ((const float4 *)(a + head))[v], y = ((const float4 *)(b + head))[v]; ((float4 *)(out + head))[v] = make_float4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w); }
}

template <typename F> static double time_ev(F f, int reps = 30) {
    cudaEvent_t e0, e1; CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
    for (int i = 0; i < 5; ++i) f();
    std::vector<double> v;
    for (int i = 0; i < reps; ++i) { float ms; CK(cudaEventRecord(e0)); f(); CK(cudaEventRecord(e1)); CK(cudaEventSynchronize(e1)); CK(cudaEventElapsedTime(&ms, e0, e1)); v.push_back(ms); }
    CK(cudaEventDestroy(e0)); CK(cudaEventDestroy(e1)); return med(v);
}
__global__ void k_rand(float *p, size_t n, uint32_t seed) {
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        uint32_t x = (uint32_t)i * 2654435761u ^ seed; x ^= x >> 16; x *= 0x7feb352d; x ^= x >> 15; x *= 0x846ca68b; x ^= x >> 16;
        p[i] = (x >> 8) * (1.0f / 16777216.0f) * 2.f - 1.f; }
}
static void vec_exp() {
    const size_t N = (size_t)1 << 28; float *a, *b, *o;
    CK(cudaMalloc(&a, N * 4 + 1024)); CK(cudaMalloc(&b, N * 4 + 1024)); CK(cudaMalloc(&o, N * 4 + 1024));
    k_rand<<<1024, 256>>>(a, N + 256, 1); k_rand<<<1024, 256>>>(b, N + 256, 2); CK(cudaDeviceSynchronize());
    int sms; CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    for (int cas = 0; cas < 2; ++cas) {
        size_t n = cas == 0 ? N : N - 3, off = cas == 0 ? 0 : 1;
        float *pa = a + off, *pb = b + off, *po = o + off;
        double gb = 12.0 * n / 1e9;
        double tm = time_ev([&] { CK(cudaMemcpyAsync(po, pa, n * 4, cudaMemcpyDeviceToDevice)); });
        double memcpy_bw = 8.0 * n / 1e9 / (tm * 1e-3);
        printf("VEC n=%zu off=%zu memcpy %.0f GB/s\n", n, off, memcpy_bw);
        for (int al = 0; al < 2; ++al) {
            size_t align = al ? 128 : 16; uintptr_t m = (uintptr_t)po % align; size_t head = m ? (align - m) / 4 : 0; size_t nvec = (n - head) / 4;
            auto rep = [&](const char *nm, double ms) { double bw = gb / (ms * 1e-3); printf("VEC   align%-3zu %-22s %.0f GB/s ratio %.3f\n", align, nm, bw, bw / memcpy_bw); };
            for (int bps : {4, 8}) {
                unsigned g4 = sms * bps;
                char nm[64];
                snprintf(nm, 64, "u4 %dbps", bps); rep(nm, time_ev([&] { k_add<4, false><<<g4, 256>>>(po, pa, pb, head, nvec, n); }));
                snprintf(nm, 64, "u4 stream %dbps", bps); rep(nm, time_ev([&] { k_add<4, true><<<g4, 256>>>(po, pa, pb, head, nvec, n); }));
                snprintf(nm, 64, "u8 %dbps", bps); rep(nm, time_ev([&] { k_add<8, false><<<g4, 256>>>(po, pa, pb, head, nvec, n); }));
                snprintf(nm, 64, "u2 %dbps", bps); rep(nm, time_ev([&] { k_add<2, false><<<g4, 256>>>(po, pa, pb, head, nvec, n); }));
            }
            rep("flat", time_ev([&] { k_add_flat<<<(unsigned)((nvec + 255) / 256), 256>>>(po, pa, pb, head, nvec, n); }));
        }
    }
    // sum: CUB vs a copy of our kernel shape without memset (sum only, float acc double)
    {
        void *tmp = nullptr; size_t tb = 0; float *r; CK(cudaMalloc(&r, 64));
        CK(cub::DeviceReduce::Sum(tmp, tb, a, r, (int)N)); CK(cudaMalloc(&tmp, tb));
        double tc = time_ev([&] { CK(cub::DeviceReduce::Sum(tmp, tb, a, r, (int)N)); });
        printf("SUM cub %.1f GB/s\n", 4.0 * N / 1e9 / (tc * 1e-3));
        for (int lg : {10, 16, 20}) { size_t n = (size_t)1 << lg; size_t tb2 = tb;
            double t = time_ev([&] { CK(cub::DeviceReduce::Sum(tmp, tb2, a, r, (int)n)); }, 50);
            printf("SUMLAT cub 2^%d %.2f us\n", lg, t * 1e3); }
        double t1 = time_ev([&] { k_empty<<<1, 32>>>(); }, 50);
        printf("LAT one empty launch %.2f us\n", t1 * 1e3);
        double t2 = time_ev([&] { CK(cudaMemsetAsync(r, 0, 4)); k_empty<<<1, 32>>>(); }, 50);
        printf("LAT memset + launch %.2f us\n", t2 * 1e3);
        CK(cudaFree(tmp)); CK(cudaFree(r));
    }
    CK(cudaFree(a)); CK(cudaFree(b)); CK(cudaFree(o));
}

int main() {
    CK(cudaSetDevice(0)); CK(cudaFree(0));
    pool_exp(); graph_exp(); vec_exp();
    return 0;
}
