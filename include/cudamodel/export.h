/**
 * @file export.h
 * @brief The one export macro of libcudamodel.
 *
 * The library is built with hidden symbol visibility; only declarations marked CM_API are
 * exported from the shared library. Internal symbols (cm__...) stay hidden.
 */
#ifndef CUDAMODEL_EXPORT_H
#define CUDAMODEL_EXPORT_H

/**
 * @def CM_API
 * @brief Marks a declaration as part of the exported API: default symbol visibility with GCC
 *        and Clang (the library is built with hidden visibility), dllexport / dllimport on
 *        Windows for a shared build, empty otherwise. Every exported cm_ function carries it;
 *        static inline functions of the headers do not (they export no symbol).
 */
#if defined(_WIN32)
#  if defined(CM_BUILDING_LIBRARY) && defined(CM_SHARED_LIBRARY)
#    define CM_API __declspec(dllexport)
#  elif defined(CM_SHARED_LIBRARY)
#    define CM_API __declspec(dllimport)
#  else
#    define CM_API
#  endif
#elif defined(__GNUC__) || defined(__clang__)
#  define CM_API __attribute__((visibility("default")))
#else
#  define CM_API
#endif

#ifdef __cplusplus
#  define CM_EXTERN_C_BEGIN extern "C" {
#  define CM_EXTERN_C_END }
#else
#  define CM_EXTERN_C_BEGIN
#  define CM_EXTERN_C_END
#endif

#endif /* CUDAMODEL_EXPORT_H */
