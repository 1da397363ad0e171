// Vector types the memory-bound kernels load and store: 16 bytes per access. Private to kernels/.
#ifndef CUDAMODEL_KERNELS_VEC_CUH
#define CUDAMODEL_KERNELS_VEC_CUH

#include <cstdint>

namespace cm_kernels {

template <typename T> struct Vec;
template <> struct Vec<float> {
    using type = float4;
    static constexpr int width = 4;
};
template <> struct Vec<double> {
    using type = double2;
    static constexpr int width = 2;
};
template <> struct Vec<int32_t> {
    using type = int4;
    static constexpr int width = 4;
};

}  // namespace cm_kernels

#endif  // CUDAMODEL_KERNELS_VEC_CUH
