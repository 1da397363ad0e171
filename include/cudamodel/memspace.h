/**
 * @file memspace.h
 * @brief The memory model's other spaces: constant and __device__ symbols, 2-D pitched buffers
 *        and CUDA arrays, texture and surface objects, and managed (unified) memory.
 *
 * ## The model
 * Besides global memory (buffer.h) a kernel reads and writes a few other spaces, each with a
 * classic way to go wrong. Each object here closes one of them:
 *
 * - **Constant and __device__ symbols.** A `__constant__` array (cached, broadcast to a warp) or
 *   a `__device__` variable is defined in your `.cu` file and filled from the host by copying to
 *   its *symbol*. cm_symbol_copy_from_host() / cm_symbol_copy_to_host() check the offset and
 *   length against the symbol's size (cudaGetSymbolSize) before anything is written: "a copy of
 *   80 bytes at offset 0 does not fit the 64-byte symbol" instead of a silent overrun or
 *   "invalid argument". A pointer that is not a symbol is reported as such, with the usual
 *   causes. cm_symbol_address() gives the symbol's device address and size, for launches.
 * - **2-D pitched buffers** (cm_pitched_t, cudaMallocPitch): an image of width x height
 *   elements whose rows start `pitch` bytes apart (pitch >= width x element size, chosen by the
 *   driver for aligned row starts). Indexing a row with the width instead of the pitch is the
 *   classic bug; the handle carries the pitch (cm_pitched_info()).
 * - **CUDA arrays** (cm_array_t, cudaMallocArray): opaque 2-D images laid out for the texture
 *   cache (spatial locality in both directions), read through textures and written through
 *   surfaces; kernels cannot address them with pointers.
 * - **2-D copies** (cm_copy_2d()) move a rectangle between host memory, pitched buffers and
 *   arrays. Every side is checked against its handle (column + width within the width, row +
 *   height within the height, a host pitch large enough for a row) before anything is written.
 * - **Texture objects** (cm_texture_t) read a cm_buffer_t (1-D, tex1Dfetch), a pitched buffer or
 *   an array (2-D, tex2D) through the texture cache, with hardware addressing (clamp, wrap,
 *   mirror, border), filtering (point, bilinear) and integer-to-float conversion. How to read
 *   is a zero-initialised cm_texture_desc_t, validated like a launch configuration: every broken
 *   rule is named with its numbers (linear filtering of an integer format without
 *   CM_READ_NORMALIZED_FLOAT, wrap or mirror without normalised coordinates, a pitch that is not
 *   a multiple of the device's texturePitchAlignment, a base not aligned to textureAlignment,
 *   a size over the device's linear-texture limits...), including the settings CUDA would
 *   silently ignore or change.
 * - **Surface objects** (cm_surface_t) read and write an array created with
 *   CM_ARRAY_SURFACE_LOAD_STORE (surf2Dread / surf2Dwrite).
 * - **Managed memory** (cm_managed_t, cudaMallocManaged): one address valid on the host and on
 *   every device; pages migrate on demand. cm_managed_prefetch() moves a range ahead of use (no
 *   page faults), cm_managed_advise() sets read-mostly, preferred-location and accessed-by
 *   hints. Whether a device can access managed memory while the host does, and oversubscribe
 *   its memory, depends on its concurrentManagedAccess attribute (0 on WSL2, Windows and GPUs
 *   before Pascal); the out-of-memory report of a managed allocation says which applies.
 *
 * ## No dangling texture
 * A texture or surface reads its memory by address. **Destroying memory while a texture or
 * surface over it exists is refused**: cm_buffer_destroy(), cm_pitched_destroy() and
 * cm_array_destroy() return CM_ERROR_BUSY naming the texture (or surface) and where it was
 * created, and the memory stays alive. Destroy the texture first. Closing a device object with
 * live pitched buffers, arrays, textures, surfaces or managed buffers is refused like closing
 * it with live buffers, with the leak report (cm_device_leak_report() lists them all).
 *
 * ## Symbols from plain C
 * The runtime identifies a symbol by the address of its host-side shadow, which only code
 * compiled by nvcc can take. Export it from your `.cu` file with C linkage:
 * @code
 * // filter.cu  (nvcc -cudart shared; the library and your code must share one CUDA runtime)
 * __constant__ float taps[16];
 * extern "C" const void *filter_taps_symbol(void) { return (const void *)&taps; }
 * @endcode
 * and pass that address from C:
 * @code
 * const void *filter_taps_symbol(void);              // declared in a header of yours
 * float h_taps[16] = {...};
 * CM_TRY(cm_symbol_copy_from_host(NULL, dev, filter_taps_symbol(), 0, h_taps, sizeof h_taps));
 * @endcode
 * A symbol exists once per device: the copy goes to the symbol on `dev`'s device.
 *
 * ## A texture from C
 * @code
 * CM_SCOPED(cm_array) cm_array_t *img = NULL;
 * CM_TRY(cm_array_create(dev, w, h, CM_FORMAT_F32, 0, &img));
 * CM_TRY(cm_copy_2d(NULL, cm_place_array(img, 0, 0), cm_place_host(pixels, 0), w, h));
 * cm_texture_desc_t desc = CM_TEXTURE_DESC_INIT;      // clamp, point, element type
 * desc.filter_mode = CM_FILTER_LINEAR;                 // bilinear: tex2D<float>(t, x + .5f, y + .5f)
 * CM_SCOPED(cm_texture) cm_texture_t *tex = NULL;      // declared after img: released first
 * CM_TRY(cm_texture_create_from_array(img, &desc, &tex));
 * unsigned long long t = 0;
 * CM_TRY(cm_texture_object(tex, &t));                  // a cudaTextureObject_t for the kernel
 * void *args[] = {&t, &d_out, &w, &h};
 * CM_TRY(cm_launch(NULL, resize_kernel, &cfg, args));
 * @endcode
 *
 * ## Streams, units
 * Calls that queue work take the stream first, as in buffer.h: a library stream (stream.h), or
 * NULL for synchronous (the legacy default stream of the memory's device; complete on return).
 * A stream of another device than the memory's is refused with both ordinals named. Offsets
 * into symbols and managed buffers are bytes; 2-D positions, widths and heights are elements
 * (columns) and rows; pitches are bytes.
 *
 * ## Ownership, threading
 * Every create returns a handle of the core's generational table that the caller owns; its
 * destroy releases it; destroy(NULL) is a no-op; a destroyed (stale) or foreign handle is
 * reported with its kind, never followed. CM_SCOPED(cm_pitched), CM_SCOPED(cm_array),
 * CM_SCOPED(cm_texture), CM_SCOPED(cm_surface) and CM_SCOPED(cm_managed) release at scope exit
 * (GCC/Clang). A single handle is used by one thread at a time; distinct handles may be used by
 * several threads at once. The library never prints, never calls exit() or abort().
 */
#ifndef CUDAMODEL_MEMSPACE_H
#define CUDAMODEL_MEMSPACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cudamodel/buffer.h>
#include <cudamodel/device.h>
#include <cudamodel/export.h>
#include <cudamodel/status.h>

CM_EXTERN_C_BEGIN

/* ============================================================================== element formats */

/**
 * @brief Element formats of pitched buffers, arrays and textures: a scalar type and 1, 2 or 4
 *        channels (CUDA's channel formats; arrays have no 3-channel formats). CM_FORMAT_NONE (0)
 *        is "not given": in a texture descriptor it means the memory's own format.
 */
typedef enum cm_format {
    CM_FORMAT_NONE = 0,
    CM_FORMAT_U8 = 1, CM_FORMAT_U8X2 = 2, CM_FORMAT_U8X4 = 3,
    CM_FORMAT_I8 = 4, CM_FORMAT_I8X2 = 5, CM_FORMAT_I8X4 = 6,
    CM_FORMAT_U16 = 7, CM_FORMAT_U16X2 = 8, CM_FORMAT_U16X4 = 9,
    CM_FORMAT_I16 = 10, CM_FORMAT_I16X2 = 11, CM_FORMAT_I16X4 = 12,
    CM_FORMAT_U32 = 13, CM_FORMAT_U32X2 = 14, CM_FORMAT_U32X4 = 15,
    CM_FORMAT_I32 = 16, CM_FORMAT_I32X2 = 17, CM_FORMAT_I32X4 = 18,
    CM_FORMAT_F16 = 19, CM_FORMAT_F16X2 = 20, CM_FORMAT_F16X4 = 21,
    CM_FORMAT_F32 = 22, CM_FORMAT_F32X2 = 23, CM_FORMAT_F32X4 = 24
} cm_format_t;
/** @var CM_FORMAT_NONE
 *  @brief No format (in a texture descriptor: the memory's own). */
/** @var CM_FORMAT_U8
 *  @brief unsigned char (uchar1) */
/** @var CM_FORMAT_U8X2
 *  @brief uchar2 */
/** @var CM_FORMAT_U8X4
 *  @brief uchar4 (e.g. RGBA8 pixels) */
/** @var CM_FORMAT_I8
 *  @brief signed char */
/** @var CM_FORMAT_I8X2
 *  @brief char2 */
/** @var CM_FORMAT_I8X4
 *  @brief char4 */
/** @var CM_FORMAT_U16
 *  @brief unsigned short */
/** @var CM_FORMAT_U16X2
 *  @brief ushort2 */
/** @var CM_FORMAT_U16X4
 *  @brief ushort4 */
/** @var CM_FORMAT_I16
 *  @brief short */
/** @var CM_FORMAT_I16X2
 *  @brief short2 */
/** @var CM_FORMAT_I16X4
 *  @brief short4 */
/** @var CM_FORMAT_U32
 *  @brief unsigned int */
/** @var CM_FORMAT_U32X2
 *  @brief uint2 */
/** @var CM_FORMAT_U32X4
 *  @brief uint4 */
/** @var CM_FORMAT_I32
 *  @brief int */
/** @var CM_FORMAT_I32X2
 *  @brief int2 */
/** @var CM_FORMAT_I32X4
 *  @brief int4 */
/** @var CM_FORMAT_F16
 *  @brief half (textures return float) */
/** @var CM_FORMAT_F16X2
 *  @brief half2 */
/** @var CM_FORMAT_F16X4
 *  @brief half4 */
/** @var CM_FORMAT_F32
 *  @brief float */
/** @var CM_FORMAT_F32X2
 *  @brief float2 */
/** @var CM_FORMAT_F32X4
 *  @brief float4 */

/** @brief The last valid cm_format_t value. */
#define CM_FORMAT_LAST CM_FORMAT_F32X4

/**
 * @brief Channels of a format: 1, 2 or 4; 0 for CM_FORMAT_NONE or a value outside the enum.
 * @param[in] format  any value.
 * @return the channel count. Pure function. Thread-safe.
 */
static inline unsigned cm_format_channels(cm_format_t format) {
    if ((int)format < 1 || (int)format > (int)CM_FORMAT_LAST) return 0;
    static const unsigned char ch[3] = {1, 2, 4};
    return ch[((int)format - 1) % 3];
}

/**
 * @brief Bytes of one element (all channels) of a format: 1 .. 16; 0 for CM_FORMAT_NONE or a
 *        value outside the enum.
 * @param[in] format  any value.
 * @return the element size. Pure function. Thread-safe.
 */
static inline size_t cm_format_bytes(cm_format_t format) {
    if ((int)format < 1 || (int)format > (int)CM_FORMAT_LAST) return 0;
    /* channel bytes per scalar type, in enum order: u8 i8 u16 i16 u32 i32 f16 f32 */
    static const unsigned char scalar[8] = {1, 1, 2, 2, 4, 4, 2, 4};
    return (size_t)scalar[((int)format - 1) / 3] * cm_format_channels(format);
}

/**
 * @brief Whether a format holds integers (8-, 16- or 32-bit, signed or unsigned) rather than
 *        floating-point values.
 * @param[in] format  any value.
 * @return true for the U and I formats; false for F16, F32, NONE and values outside the enum.
 *         Pure function. Thread-safe.
 */
static inline bool cm_format_is_integer(cm_format_t format) {
    return (int)format >= 1 && (int)format <= (int)CM_FORMAT_I32X4;
}

/**
 * @brief The name of a format as written in this header ("CM_FORMAT_F32X4").
 * @param[in] format  any value.
 * @return a static string; "CM_FORMAT_NONE" for 0 and "unknown format" outside the enum.
 *         Pure function. Thread-safe.
 */
static inline const char *cm_format_name(cm_format_t format) {
    static const char *const names[CM_FORMAT_LAST + 1] = {
        "CM_FORMAT_NONE",  "CM_FORMAT_U8",    "CM_FORMAT_U8X2",  "CM_FORMAT_U8X4",
        "CM_FORMAT_I8",    "CM_FORMAT_I8X2",  "CM_FORMAT_I8X4",  "CM_FORMAT_U16",
        "CM_FORMAT_U16X2", "CM_FORMAT_U16X4", "CM_FORMAT_I16",   "CM_FORMAT_I16X2",
        "CM_FORMAT_I16X4", "CM_FORMAT_U32",   "CM_FORMAT_U32X2", "CM_FORMAT_U32X4",
        "CM_FORMAT_I32",   "CM_FORMAT_I32X2", "CM_FORMAT_I32X4", "CM_FORMAT_F16",
        "CM_FORMAT_F16X2", "CM_FORMAT_F16X4", "CM_FORMAT_F32",   "CM_FORMAT_F32X2",
        "CM_FORMAT_F32X4"};
    if ((int)format < 0 || (int)format > (int)CM_FORMAT_LAST) return "unknown format";
    return names[(int)format];
}

/* ============================================================================== symbols */

/**
 * @brief Copy host (or device) memory into a `__constant__` or `__device__` symbol of a device,
 *        at a byte offset, after checking the range against the symbol's size.
 *
 * The symbol is the address of the variable's host shadow, as cudaMemcpyToSymbol takes it
 * (see "Symbols from plain C" in the file comment). Nothing is written unless
 * offset + bytes <= the symbol's size (cudaGetSymbolSize); the message of a refused copy names
 * both ("a copy of 80 bytes at offset 0 does not fit the 64-byte symbol").
 *
 * @param[in] stream  NULL: synchronous (the data is in the symbol when the call returns); or a
 *                    stream of dev's device: queued there, returns at once (keep src unchanged
 *                    until the stream reaches the copy).
 * @param[in] dev     the device whose copy of the symbol is written.
 * @param[in] symbol  the symbol: the address of a `__constant__` or `__device__` variable of
 *                    code compiled by nvcc (not a string, not a copy of the pointer value).
 * @param[in] offset  byte offset into the symbol.
 * @param[in] src     source of bytes bytes: host memory (pageable or pinned) or device memory;
 *                    may be NULL when bytes is 0.
 * @param[in] bytes   bytes to copy; 0 does nothing (after the checks).
 * @return CM_OK;
 *         CM_ERROR_INVALID_ARGUMENT for a NULL or closed dev, a NULL symbol, a NULL src with
 *         bytes > 0, an address that is not a symbol (cudaErrorInvalidSymbol: the message says
 *         why this happens), a range beyond the symbol (the message names offset, length and
 *         the symbol's size), or a released stream or one of another device; nothing is
 *         written; CM_ERROR_CONTEXT_LOST; other CUDA failures as recorded.
 * Thread-safe (two threads writing one symbol race like any two writes).
 */
CM_API cm_status_t cm_symbol_copy_from_host(cm_stream_t *stream, cm_device_t *dev,
                                            const void *symbol, size_t offset, const void *src,
                                            size_t bytes);

/**
 * @brief Copy bytes of a `__constant__` or `__device__` symbol of a device, from a byte offset,
 *        into host (or device) memory, after checking the range against the symbol's size.
 * @param[in]  stream  NULL: synchronous (the data is in dst when the call returns); or a stream
 *                     of dev's device: queued there, returns at once (read dst after
 *                     synchronising the stream).
 * @param[in]  dev     the device whose copy of the symbol is read.
 * @param[in]  symbol  the symbol (see cm_symbol_copy_from_host()).
 * @param[in]  offset  byte offset into the symbol.
 * @param[out] dst     destination of bytes bytes (host or device memory); may be NULL when
 *                     bytes is 0.
 * @param[in]  bytes   bytes to copy.
 * @return CM_OK; CM_ERROR_INVALID_ARGUMENT for the reasons of cm_symbol_copy_from_host(), dst
 *         untouched; CM_ERROR_CONTEXT_LOST; other CUDA failures as recorded.
 * Thread-safe.
 */
CM_API cm_status_t cm_symbol_copy_to_host(cm_stream_t *stream, cm_device_t *dev,
                                          const void *symbol, size_t offset, void *dst,
                                          size_t bytes);

/**
 * @brief The device address and size of a symbol on a device (cudaGetSymbolAddress,
 *        cudaGetSymbolSize): pass the address to a kernel that takes a pointer, or to
 *        copies of your own. `__constant__` memory is read-only for kernels.
 * @param[in]  dev     the device.
 * @param[in]  symbol  the symbol (see cm_symbol_copy_from_host()).
 * @param[out] ptr     receives the device address; optional (NULL: not asked).
 * @param[out] bytes   receives the symbol's size in bytes; optional (NULL: not asked).
 * @return CM_OK; CM_ERROR_INVALID_ARGUMENT for a NULL or closed dev, a NULL symbol or an address
 *         that is not a symbol; CM_ERROR_CONTEXT_LOST; other CUDA failures as recorded. The
 *         outputs are unchanged on failure.
 * Thread-safe.
 */
CM_API cm_status_t cm_symbol_address(cm_device_t *dev, const void *symbol, void **ptr,
                                     size_t *bytes);

/* ============================================================================== pitched buffers */

/** @brief A 2-D pitched device buffer (opaque). See cm_pitched_create(). */
typedef struct cm_pitched cm_pitched_t;

/**
 * @brief Allocate a 2-D pitched buffer of width x height elements of a format
 *        (cudaMallocPitch) and count it in the device.
 *
 * Usually called through cm_pitched_create(dev, width, height, format, &out). The driver
 * chooses the pitch (bytes from one row's start to the next, at least width x element bytes,
 * a multiple of the device's texturePitchAlignment): read it with cm_pitched_info() and index
 * row y at `(char *)ptr + y * pitch`. On out-of-memory the device's pool is trimmed and the
 * allocation tried once more; the detail then carries the out-of-memory report (buffer.h).
 *
 * @param[in]  dev     the device.
 * @param[in]  width   elements per row, at least 1.
 * @param[in]  height  rows, at least 1.
 * @param[in]  format  element format (CM_FORMAT_U8 with width in bytes for raw bytes).
 * @param[out] out     receives the new handle; left unchanged on failure.
 * @param[in]  label   optional name shown in leak reports (copied, up to 63 characters), or NULL.
 * @param[in]  file    optional source file of the caller (static storage, kept as a pointer).
 * @param[in]  line    its line.
 * @return CM_OK; CM_ERROR_INVALID_ARGUMENT for a NULL out, a NULL or closed dev, a width or
 *         height of 0, a format outside the enum, or a row size that overflows;
 *         CM_ERROR_DEVICE_OUT_OF_MEMORY with the report; CM_ERROR_HOST_OUT_OF_MEMORY;
 *         CM_ERROR_CONTEXT_LOST; other CUDA failures as recorded.
 * Ownership: the caller owns the buffer and releases it with cm_pitched_destroy().
 */
CM_API cm_status_t cm_pitched_create_at(cm_device_t *dev, size_t width, size_t height,
                                        cm_format_t format, cm_pitched_t **out, const char *label,
                                        const char *file, int line);

/** @brief cm_pitched_create_at() with the caller's file:line and no label. */
#define cm_pitched_create(dev, width, height, format, out)                                   \
    cm_pitched_create_at((dev), (width), (height), (format), (out), NULL, __FILE__, __LINE__)

/**
 * @brief Release a pitched buffer (cudaFree, which waits for the device's work).
 * @param[in] img  the buffer, or NULL (a no-op returning CM_OK).
 * @return CM_OK; CM_ERROR_INVALID_ARGUMENT when img was already destroyed or is not a pitched
 *         buffer handle; CM_ERROR_BUSY, the buffer left alive, while a texture reads it (the
 *         message names the texture and where it was created) or while this thread captures a
 *         graph; CUDA failures of the free as recorded (the handle is released all the same).
 */
CM_API cm_status_t cm_pitched_destroy(cm_pitched_t *img);

/**
 * @brief Cleanup function of CM_SCOPED(cm_pitched): destroys *img when it is not NULL and sets
 *        it to NULL (unless the destroy was refused with CM_ERROR_BUSY).
 * @param[in,out] img  address of the handle variable; NULL and *img == NULL are no-ops.
 * Ownership: releases the buffer the variable owned.
 */
static inline void cm_pitched_scope_exit(cm_pitched_t **img) {
    if (img == NULL || *img == NULL) return;
    if (cm_pitched_destroy(*img) != CM_ERROR_BUSY) *img = NULL;
}

/** @brief What cm_pitched_info() tells about a pitched buffer. */
typedef struct cm_pitched_info {
    size_t width;            /**< elements per row */
    size_t height;           /**< rows */
    cm_format_t format;      /**< element format */
    size_t element_bytes;    /**< cm_format_bytes(format) */
    size_t row_bytes;        /**< width x element_bytes: the bytes of a row that hold data */
    size_t pitch;            /**< bytes from one row's start to the next (>= row_bytes) */
    size_t bytes;            /**< pitch x height: the allocation */
    void *device_ptr;        /**< address of element (0, 0); row y starts at + y x pitch */
    cm_device_t *device;     /**< the device object it is counted in */
    int ordinal;             /**< that device's CUDA ordinal */
    char label[64];          /**< its label, or "" */
} cm_pitched_info_t;

/**
 * @brief Size, format, pitch, address, device and label of a pitched buffer.
 * @param[in]  img   the buffer.
 * @param[out] info  filled on success; unchanged on failure.
 * @return CM_OK; CM_ERROR_INVALID_ARGUMENT for NULL arguments or a destroyed buffer.
 */
CM_API cm_status_t cm_pitched_info(const cm_pitched_t *img, cm_pitched_info_t *info);

/* ============================================================================== CUDA arrays */

/** @brief A 2-D CUDA array (opaque). See cm_array_create(). */
typedef struct cm_array cm_array_t;

/** @brief Options of cm_array_create(); OR them together. */
typedef enum cm_array_flags {
    CM_ARRAY_DEFAULT = 0,             /**< read through textures */
    CM_ARRAY_SURFACE_LOAD_STORE = 1   /**< also read and written through surfaces
                                           (cudaArraySurfaceLoadStore; cm_surface_create()) */
} cm_array_flags_t;

/**
 * @brief Allocate a 2-D CUDA array of width x height elements of a format (cudaMallocArray)
 *        and count it in the device.
 *
 * Usually called through cm_array_create(dev, width, height, format, flags, &out). The sizes
 * are checked against the device's 2-D texture limits (and 2-D surface limits with
 * CM_ARRAY_SURFACE_LOAD_STORE) before allocating.
 *
 * @param[in]  dev     the device.
 * @param[in]  width   elements per row, 1 .. the device's maxTexture2D width.
 * @param[in]  height  rows, 1 .. the device's maxTexture2D height.
 * @param[in]  format  element format.
 * @param[in]  flags   OR of cm_array_flags_t.
 * @param[out] out     receives the new handle; left unchanged on failure.
 * @param[in]  label   optional name shown in leak reports (copied), or NULL.
 * @param[in]  file    optional source file of the caller (static storage, kept as a pointer).
 * @param[in]  line    its line.
 * @return CM_OK; CM_ERROR_INVALID_ARGUMENT for a NULL out, a NULL or closed dev, a size of 0 or
 *         over the device's limit (the message names the limit), a format outside the enum or
 *         unknown flag bits; CM_ERROR_DEVICE_OUT_OF_MEMORY with the report;
 *         CM_ERROR_HOST_OUT_OF_MEMORY; CM_ERROR_CONTEXT_LOST; other CUDA failures as recorded.
 * Ownership: the caller owns the array and releases it with cm_array_destroy().
 */
CM_API cm_status_t cm_array_create_at(cm_device_t *dev, size_t width, size_t height,
                                      cm_format_t format, unsigned flags, cm_array_t **out,
                                      const char *label, const char *file, int line);

/** @brief cm_array_create_at() with the caller's file:line and no label. */
#define cm_array_create(dev, width, height, format, flags, out)                              \
    cm_array_create_at((dev), (width), (height), (format), (flags), (out), NULL, __FILE__,   \
                       __LINE__)

/**
 * @brief Release a CUDA array (cudaFreeArray, which waits for the device's work).
 * @param[in] arr  the array, or NULL (a no-op returning CM_OK).
 * @return CM_OK; CM_ERROR_INVALID_ARGUMENT when arr was already destroyed or is not an array
 *         handle; CM_ERROR_BUSY, the array left alive, while a texture or surface uses it (the
 *         message names it and where it was created) or while this thread captures a graph;
 *         CUDA failures of the free as recorded (the handle is released all the same).
 */
CM_API cm_status_t cm_array_destroy(cm_array_t *arr);

/**
 * @brief Cleanup function of CM_SCOPED(cm_array): destroys *arr when it is not NULL and sets it
 *        to NULL (unless the destroy was refused with CM_ERROR_BUSY).
 * @param[in,out] arr  address of the handle variable; NULL and *arr == NULL are no-ops.
 * Ownership: releases the array the variable owned.
 */
static inline void cm_array_scope_exit(cm_array_t **arr) {
    if (arr == NULL || *arr == NULL) return;
    if (cm_array_destroy(*arr) != CM_ERROR_BUSY) *arr = NULL;
}

/** @brief What cm_array_info() tells about a CUDA array. */
typedef struct cm_array_info {
    size_t width;            /**< elements per row */
    size_t height;           /**< rows */
    cm_format_t format;      /**< element format */
    size_t element_bytes;    /**< cm_format_bytes(format) */
    unsigned flags;          /**< the cm_array_flags_t it was created with */
    void *cuda_array;        /**< the cudaArray_t, for CUDA calls of your own (interop) */
    cm_device_t *device;     /**< the device object it is counted in */
    int ordinal;             /**< that device's CUDA ordinal */
    char label[64];          /**< its label, or "" */
} cm_array_info_t;

/**
 * @brief Size, format, flags, device and label of a CUDA array.
 * @param[in]  arr   the array.
 * @param[out] info  filled on success; unchanged on failure.
 * @return CM_OK; CM_ERROR_INVALID_ARGUMENT for NULL arguments or a destroyed array.
 */
CM_API cm_status_t cm_array_info(const cm_array_t *arr, cm_array_info_t *info);

/* ============================================================================== 2-D copies */

/** @brief What a cm_place_t names. */
typedef enum cm_place_kind {
    CM_PLACE_NONE = 0,      /**< not set (refused) */
    CM_PLACE_HOST = 1,      /**< host memory with a row pitch */
    CM_PLACE_PITCHED = 2,   /**< a pitched buffer, at an element column and row */
    CM_PLACE_ARRAY = 3      /**< a CUDA array, at an element column and row */
} cm_place_kind_t;

/**
 * @brief One side of a 2-D copy: the corner of a rectangle in host memory, a pitched buffer or
 *        an array. Build it with cm_place_host(), cm_place_pitched() or cm_place_array().
 */
typedef struct cm_place {
    cm_place_kind_t kind;          /**< which of the fields below apply */
    const void *host;              /**< CM_PLACE_HOST: the rectangle's first byte (written when
                                        the place is a destination) */
    size_t host_pitch;             /**< CM_PLACE_HOST: bytes from one row to the next; 0: rows
                                        packed (width x element bytes) */
    const cm_pitched_t *pitched;   /**< CM_PLACE_PITCHED: the buffer */
    const cm_array_t *array;       /**< CM_PLACE_ARRAY: the array */
    size_t x;                      /**< handle places: the rectangle's first column (elements) */
    size_t y;                      /**< handle places: its first row */
} cm_place_t;

/**
 * @brief A host-memory place: rows of the rectangle start pitch_bytes apart at data.
 * @param[in] data         the rectangle's first byte (source or destination).
 * @param[in] pitch_bytes  bytes between row starts; 0 for rows packed one after the other.
 * @return the place. Pure function.
 */
static inline cm_place_t cm_place_host(const void *data, size_t pitch_bytes) {
    cm_place_t p = {CM_PLACE_HOST, data, pitch_bytes, NULL, NULL, 0, 0};
    return p;
}

/**
 * @brief A pitched-buffer place: the rectangle whose corner is element (x, y) of img.
 * @param[in] img  the pitched buffer.
 * @param[in] x    first column (elements).
 * @param[in] y    first row.
 * @return the place. Pure function.
 */
static inline cm_place_t cm_place_pitched(const cm_pitched_t *img, size_t x, size_t y) {
    cm_place_t p = {CM_PLACE_PITCHED, NULL, 0, img, NULL, x, y};
    return p;
}

/**
 * @brief An array place: the rectangle whose corner is element (x, y) of arr.
 * @param[in] arr  the array.
 * @param[in] x    first column (elements).
 * @param[in] y    first row.
 * @return the place. Pure function.
 */
static inline cm_place_t cm_place_array(const cm_array_t *arr, size_t x, size_t y) {
    cm_place_t p = {CM_PLACE_ARRAY, NULL, 0, NULL, arr, x, y};
    return p;
}

/**
 * @brief Copy a rectangle of width x height elements between host memory, pitched buffers and
 *        arrays (cudaMemcpy2DAsync, cudaMemcpy2DToArrayAsync, cudaMemcpy2DFromArrayAsync).
 *
 * Host to pitched or array, pitched or array to host, pitched to pitched, pitched to array and
 * array to pitched. Widths are elements of the handle side's format (both handle sides must
 * have elements of the same size; the bytes are copied as they are). Every side is checked
 * before anything is written: the rectangle within the handle (x + width <= its width,
 * y + height <= its height, without overflow), a host pitch of at least a row
 * (width x element bytes), a non-NULL host pointer, host memory that is not device memory,
 * handles of one device, and the stream's device.
 *
 * @param[in] stream  NULL: synchronous (complete on return); or a stream of the handles'
 *                    device: queued there and returns at once, except that a pageable host
 *                    destination is complete on return (as for cm_buffer_copy_to_host()).
 *                    On a stream being captured into a graph the copy is captured and
 *                    writes (reads) the host rectangle at each launch of the graph.
 * @param[in] dst     where the rectangle goes.
 * @param[in] src     where it comes from.
 * @param[in] width   elements per row of the rectangle; 0 copies nothing (after the checks).
 * @param[in] height  rows of the rectangle; 0 copies nothing (after the checks).
 * @return CM_OK;
 *         CM_ERROR_INVALID_ARGUMENT for a place of kind NONE or outside the enum, a NULL or
 *         destroyed handle, a rectangle beyond a handle (the message names the side, the
 *         corner, the rectangle and the handle's size), a host pitch below a row, a NULL host
 *         pointer, device memory given as host memory, elements of different sizes, handles of
 *         two devices, host to host, or a bad stream; nothing is written;
 *         CM_ERROR_NOT_SUPPORTED for array to array (copy through a pitched buffer);
 *         CM_ERROR_CONTEXT_LOST; other CUDA failures as recorded.
 */
CM_API cm_status_t cm_copy_2d(cm_stream_t *stream, cm_place_t dst, cm_place_t src, size_t width,
                              size_t height);

/* ============================================================================== textures */

/** @brief A texture object (opaque). See cm_texture_create_from_array(). */
typedef struct cm_texture cm_texture_t;

/** @brief What a coordinate outside the texture reads. Applies to every dimension. */
typedef enum cm_address_mode {
    CM_ADDRESS_CLAMP = 0,   /**< the nearest edge element (the default) */
    CM_ADDRESS_WRAP = 1,    /**< repeat the texture (normalised coordinates only) */
    CM_ADDRESS_MIRROR = 2,  /**< repeat it mirrored (normalised coordinates only) */
    CM_ADDRESS_BORDER = 3   /**< zero */
} cm_address_mode_t;

/** @brief How a read between element centres is answered. */
typedef enum cm_filter_mode {
    CM_FILTER_POINT = 0,    /**< the nearest element (the default) */
    CM_FILTER_LINEAR = 1    /**< (bi)linear interpolation of the neighbours; needs float results:
                                 a float format, or an 8/16-bit integer format read with
                                 CM_READ_NORMALIZED_FLOAT */
} cm_filter_mode_t;

/** @brief What an integer element reads as. */
typedef enum cm_read_mode {
    CM_READ_ELEMENT_TYPE = 0,     /**< the stored type (the default) */
    CM_READ_NORMALIZED_FLOAT = 1  /**< 8- and 16-bit integers as floats in [0, 1] (unsigned) or
                                       [-1, 1] (signed); not for 32-bit integers */
} cm_read_mode_t;

/**
 * @brief How a texture reads its memory. Zero-initialise (CM_TEXTURE_DESC_INIT): 0 is the
 *        default of every field (clamp, point, element type, unnormalised coordinates, the
 *        memory's format).
 */
typedef struct cm_texture_desc {
    cm_address_mode_t address_mode; /**< outside the texture; every dimension */
    cm_filter_mode_t filter_mode;   /**< between elements */
    cm_read_mode_t read_mode;       /**< integer to float conversion */
    bool normalized_coords;         /**< coordinates in [0, 1) instead of [0, width) */
    cm_format_t format;             /**< element format; CM_FORMAT_NONE: the memory's (a
                                         pitched buffer's or array's); required for a
                                         cm_buffer_t, which has none; must equal the memory's
                                         when given for a pitched buffer or an array */
} cm_texture_desc_t;

/** @brief A texture descriptor with every field at its default. */
#define CM_TEXTURE_DESC_INIT {CM_ADDRESS_CLAMP, CM_FILTER_POINT, CM_READ_ELEMENT_TYPE, false,     \
                              CM_FORMAT_NONE}

/**
 * @brief Create a 1-D texture over a range of a device buffer (a linear texture, read with
 *        tex1Dfetch(t, i) by integer element index; cudaResourceTypeLinear).
 *
 * Usually called through cm_texture_create_from_buffer(buf, offset, bytes, &desc, &out).
 * The descriptor is validated and every broken rule is reported, among them: desc.format is
 * required; bytes is a whole number of elements; the range lies within the buffer; the start
 * (buffer address + offset) is a multiple of the device's textureAlignment; the element count
 * is at most the device's maxTexture1DLinear; and CUDA ignores filtering, address modes and
 * normalised coordinates for linear textures, so CM_FILTER_LINEAR, a mode other than
 * CM_ADDRESS_CLAMP and normalized_coords are refused instead of being ignored.
 *
 * The buffer cannot be destroyed while the texture exists (cm_buffer_destroy() returns
 * CM_ERROR_BUSY naming the texture).
 *
 * @param[in]  buf     the buffer.
 * @param[in]  offset  byte offset of the range.
 * @param[in]  bytes   length of the range, at least one element.
 * @param[in]  desc    how to read; not modified; NULL is refused (desc.format is required).
 * @param[out] out     receives the new handle; left unchanged on failure.
 * @param[in]  file    optional source file of the caller (static storage), for reports.
 * @param[in]  line    its line.
 * @return CM_OK; CM_ERROR_INVALID_ARGUMENT for NULL arguments, a destroyed buffer or each
 *         broken rule (all of them listed, with the numbers); CM_ERROR_CONTEXT_LOST; other
 *         CUDA failures as recorded.
 * Ownership: the caller owns the texture and releases it with cm_texture_destroy().
 */
CM_API cm_status_t cm_texture_create_from_buffer_at(const cm_buffer_t *buf, size_t offset,
                                                    size_t bytes, const cm_texture_desc_t *desc,
                                                    cm_texture_t **out, const char *file,
                                                    int line);

/** @brief cm_texture_create_from_buffer_at() with the caller's file:line. */
#define cm_texture_create_from_buffer(buf, offset, bytes, desc, out)                          \
    cm_texture_create_from_buffer_at((buf), (offset), (bytes), (desc), (out), __FILE__, __LINE__)

/**
 * @brief Create a 2-D texture over a whole pitched buffer (read with tex2D(t, x, y);
 *        cudaResourceTypePitch2D).
 *
 * Usually called through cm_texture_create_from_pitched(img, &desc, &out). Besides the
 * descriptor's rules (see cm_texture_create_from_array()), the buffer must fit the device's
 * 2-D linear-texture limits: width, height and pitch at most maxTexture2DLinear's, the pitch
 * a multiple of texturePitchAlignment and the address a multiple of textureAlignment.
 *
 * @param[in]  img   the pitched buffer (cannot be destroyed while the texture exists).
 * @param[in]  desc  how to read, or NULL for every default; not modified.
 * @param[out] out   receives the new handle; left unchanged on failure.
 * @param[in]  file  optional source file of the caller (static storage), for reports.
 * @param[in]  line  its line.
 * @return CM_OK; CM_ERROR_INVALID_ARGUMENT for a NULL out, a destroyed buffer or each broken
 *         rule (all listed); CM_ERROR_CONTEXT_LOST; other CUDA failures as recorded.
 * Ownership: the caller owns the texture and releases it with cm_texture_destroy().
 */
CM_API cm_status_t cm_texture_create_from_pitched_at(const cm_pitched_t *img,
                                                     const cm_texture_desc_t *desc,
                                                     cm_texture_t **out, const char *file,
                                                     int line);

/** @brief cm_texture_create_from_pitched_at() with the caller's file:line. */
#define cm_texture_create_from_pitched(img, desc, out)                                        \
    cm_texture_create_from_pitched_at((img), (desc), (out), __FILE__, __LINE__)

/**
 * @brief Create a 2-D texture over a CUDA array (read with tex2D(t, x, y);
 *        cudaResourceTypeArray).
 *
 * Usually called through cm_texture_create_from_array(arr, &desc, &out). The descriptor's
 * rules, every one checked and every violation reported: each mode is a value of its enum;
 * CM_ADDRESS_WRAP and CM_ADDRESS_MIRROR need normalized_coords (CUDA would silently clamp);
 * CM_FILTER_LINEAR needs float results (a float format, or an 8/16-bit integer format with
 * CM_READ_NORMALIZED_FLOAT); CM_READ_NORMALIZED_FLOAT applies to 8- and 16-bit integer formats
 * only (CUDA silently leaves 32-bit integers unconverted); desc.format, when given, equals
 * the array's; the array fits the device's 2-D texture limits.
 *
 * @param[in]  arr   the array (cannot be destroyed while the texture exists).
 * @param[in]  desc  how to read, or NULL for every default; not modified.
 * @param[out] out   receives the new handle; left unchanged on failure.
 * @param[in]  file  optional source file of the caller (static storage), for reports.
 * @param[in]  line  its line.
 * @return CM_OK; CM_ERROR_INVALID_ARGUMENT for a NULL out, a destroyed array or each broken
 *         rule (all listed, e.g. "rule: linear filtering of integer format CM_FORMAT_U8 needs
 *         read_mode CM_READ_NORMALIZED_FLOAT"); CM_ERROR_CONTEXT_LOST; other CUDA failures as
 *         recorded.
 * Ownership: the caller owns the texture and releases it with cm_texture_destroy().
 */
CM_API cm_status_t cm_texture_create_from_array_at(const cm_array_t *arr,
                                                   const cm_texture_desc_t *desc,
                                                   cm_texture_t **out, const char *file, int line);

/** @brief cm_texture_create_from_array_at() with the caller's file:line. */
#define cm_texture_create_from_array(arr, desc, out)                                          \
    cm_texture_create_from_array_at((arr), (desc), (out), __FILE__, __LINE__)

/**
 * @brief Release a texture object (cudaDestroyTextureObject); its memory can then be destroyed.
 *        Work already queued that reads the texture must have completed.
 * @param[in] tex  the texture, or NULL (a no-op returning CM_OK).
 * @return CM_OK; CM_ERROR_INVALID_ARGUMENT when tex was already destroyed or is not a texture
 *         handle; CUDA failures as recorded (the handle is released all the same).
 */
CM_API cm_status_t cm_texture_destroy(cm_texture_t *tex);

/**
 * @brief Cleanup function of CM_SCOPED(cm_texture): destroys *tex when it is not NULL and sets
 *        it to NULL. Declare the texture after its memory, so that it is released first.
 * @param[in,out] tex  address of the handle variable; NULL and *tex == NULL are no-ops.
 * Ownership: releases the texture the variable owned.
 */
static inline void cm_texture_scope_exit(cm_texture_t **tex) {
    if (tex == NULL || *tex == NULL) return;
    (void)cm_texture_destroy(*tex);
    *tex = NULL;
}

/**
 * @brief The CUDA texture object (cudaTextureObject_t, a 64-bit value) to pass to kernels.
 * @param[in]  tex  the texture.
 * @param[out] obj  receives the object; valid until the texture is destroyed.
 * @return CM_OK; CM_ERROR_INVALID_ARGUMENT for NULL arguments or a destroyed texture.
 */
CM_API cm_status_t cm_texture_object(const cm_texture_t *tex, unsigned long long *obj);

/* ============================================================================== surfaces */

/** @brief A surface object (opaque). See cm_surface_create(). */
typedef struct cm_surface cm_surface_t;

/**
 * @brief Create a surface object over a CUDA array created with CM_ARRAY_SURFACE_LOAD_STORE
 *        (read and written with surf2Dread / surf2Dwrite; x in bytes: x_element x element
 *        size).
 *
 * Usually called through cm_surface_create(arr, &out).
 *
 * @param[in]  arr   the array (cannot be destroyed while the surface exists).
 * @param[out] out   receives the new handle; left unchanged on failure.
 * @param[in]  file  optional source file of the caller (static storage), for reports.
 * @param[in]  line  its line.
 * @return CM_OK; CM_ERROR_INVALID_ARGUMENT for NULL arguments, a destroyed array, or an array
 *         created without CM_ARRAY_SURFACE_LOAD_STORE; CM_ERROR_CONTEXT_LOST; other CUDA
 *         failures as recorded.
 * Ownership: the caller owns the surface and releases it with cm_surface_destroy().
 */
CM_API cm_status_t cm_surface_create_at(const cm_array_t *arr, cm_surface_t **out,
                                        const char *file, int line);

/** @brief cm_surface_create_at() with the caller's file:line. */
#define cm_surface_create(arr, out) cm_surface_create_at((arr), (out), __FILE__, __LINE__)

/**
 * @brief Release a surface object (cudaDestroySurfaceObject); its array can then be destroyed.
 * @param[in] surf  the surface, or NULL (a no-op returning CM_OK).
 * @return CM_OK; CM_ERROR_INVALID_ARGUMENT when surf was already destroyed or is not a surface
 *         handle; CUDA failures as recorded (the handle is released all the same).
 */
CM_API cm_status_t cm_surface_destroy(cm_surface_t *surf);

/**
 * @brief Cleanup function of CM_SCOPED(cm_surface): destroys *surf when it is not NULL and sets
 *        it to NULL.
 * @param[in,out] surf  address of the handle variable; NULL and *surf == NULL are no-ops.
 * Ownership: releases the surface the variable owned.
 */
static inline void cm_surface_scope_exit(cm_surface_t **surf) {
    if (surf == NULL || *surf == NULL) return;
    (void)cm_surface_destroy(*surf);
    *surf = NULL;
}

/**
 * @brief The CUDA surface object (cudaSurfaceObject_t, a 64-bit value) to pass to kernels.
 * @param[in]  surf  the surface.
 * @param[out] obj   receives the object; valid until the surface is destroyed.
 * @return CM_OK; CM_ERROR_INVALID_ARGUMENT for NULL arguments or a destroyed surface.
 */
CM_API cm_status_t cm_surface_object(const cm_surface_t *surf, unsigned long long *obj);

/* ============================================================================== managed memory */

/** @brief Managed (unified) memory (opaque). See cm_managed_create(). */
typedef struct cm_managed cm_managed_t;

/** @brief The host, as a location of cm_managed_prefetch() and cm_managed_advise(). */
#define CM_LOCATION_HOST (-1)

/**
 * @brief Allocate managed memory (cudaMallocManaged, attached globally) and count it in the
 *        device: one address that the host and every device can use.
 *
 * Usually called through cm_managed_create(dev, bytes, &out). On a device with
 * concurrentManagedAccess (Linux, Pascal and later) the allocation may exceed the device's
 * memory (pages migrate on demand); without it (WSL2, Windows, older GPUs) it is limited by the
 * device's free memory and the host must not touch it while a kernel runs. The out-of-memory
 * report says which applies.
 *
 * @param[in]  dev    the device it is counted in (and whose streams order its copies).
 * @param[in]  bytes  size; 0 gives a valid empty buffer that holds no memory.
 * @param[out] out    receives the new handle; left unchanged on failure.
 * @param[in]  label  optional name shown in leak reports (copied), or NULL.
 * @param[in]  file   optional source file of the caller (static storage, kept as a pointer).
 * @param[in]  line   its line.
 * @return CM_OK; CM_ERROR_INVALID_ARGUMENT for a NULL out or a NULL or closed dev;
 *         CM_ERROR_NOT_SUPPORTED when the device cannot allocate managed memory
 *         (cudaDevAttrManagedMemory is 0); CM_ERROR_DEVICE_OUT_OF_MEMORY with the report and
 *         whether oversubscription is possible; CM_ERROR_HOST_OUT_OF_MEMORY;
 *         CM_ERROR_CONTEXT_LOST; other CUDA failures as recorded.
 * Ownership: the caller owns the buffer and releases it with cm_managed_destroy().
 */
CM_API cm_status_t cm_managed_create_at(cm_device_t *dev, size_t bytes, cm_managed_t **out,
                                        const char *label, const char *file, int line);

/** @brief cm_managed_create_at() with the caller's file:line and no label. */
#define cm_managed_create(dev, bytes, out)                                                   \
    cm_managed_create_at((dev), (bytes), (out), NULL, __FILE__, __LINE__)

/**
 * @brief Release managed memory (cudaFree, which waits for the device's work).
 * @param[in] m  the buffer, or NULL (a no-op returning CM_OK).
 * @return CM_OK; CM_ERROR_INVALID_ARGUMENT when m was already destroyed or is not a managed
 *         handle; CM_ERROR_BUSY, the buffer left alive, while this thread captures a graph;
 *         CUDA failures of the free as recorded (the handle is released all the same).
 */
CM_API cm_status_t cm_managed_destroy(cm_managed_t *m);

/**
 * @brief Cleanup function of CM_SCOPED(cm_managed): destroys *m when it is not NULL and sets it
 *        to NULL (unless the destroy was refused with CM_ERROR_BUSY).
 * @param[in,out] m  address of the handle variable; NULL and *m == NULL are no-ops.
 * Ownership: releases the buffer the variable owned.
 */
static inline void cm_managed_scope_exit(cm_managed_t **m) {
    if (m == NULL || *m == NULL) return;
    if (cm_managed_destroy(*m) != CM_ERROR_BUSY) *m = NULL;
}

/**
 * @brief The address of managed memory, valid on the host and on every device.
 * @param[in]  m    the buffer.
 * @param[out] ptr  receives the address (NULL for an empty buffer); valid until the buffer is
 *                  destroyed; owned by the buffer.
 * @return CM_OK; CM_ERROR_INVALID_ARGUMENT for NULL arguments or a destroyed buffer.
 */
CM_API cm_status_t cm_managed_data(const cm_managed_t *m, void **ptr);

/** @brief What cm_managed_info() tells about managed memory. */
typedef struct cm_managed_info {
    size_t bytes;                  /**< size in bytes */
    void *data;                    /**< its address (host and devices), NULL when empty */
    cm_device_t *device;           /**< the device object it is counted in */
    int ordinal;                   /**< that device's CUDA ordinal */
    bool concurrent_access;        /**< the device has concurrentManagedAccess: the host may use
                                        the memory while kernels run, prefetch and device
                                        advice work, and allocations may exceed device memory */
    char label[64];                /**< its label, or "" */
} cm_managed_info_t;

/**
 * @brief Size, address, device, the device's concurrent-access capability and label of managed
 *        memory.
 * @param[in]  m     the buffer.
 * @param[out] info  filled on success; unchanged on failure.
 * @return CM_OK; CM_ERROR_INVALID_ARGUMENT for NULL arguments or a destroyed buffer.
 */
CM_API cm_status_t cm_managed_info(const cm_managed_t *m, cm_managed_info_t *info);

/**
 * @brief Migrate a range of managed memory to a device or to the host ahead of its use
 *        (cudaMemPrefetchAsync), so that the kernels (or host code) that touch it take no page
 *        faults.
 *
 * Needs concurrentManagedAccess on the buffer's device and on a device location: without it
 * (WSL2, Windows, GPUs before Pascal) CM_ERROR_NOT_SUPPORTED says so and nothing is queued.
 *
 * @param[in] stream    NULL: synchronous (migrated on return); or a stream of the buffer's
 *                      device: queued there, returns at once.
 * @param[in] m         the buffer.
 * @param[in] offset    byte offset of the range (CUDA widens the range to whole pages).
 * @param[in] bytes     length of the range; 0 does nothing (after the checks).
 * @param[in] location  a device ordinal, or CM_LOCATION_HOST.
 * @return CM_OK; CM_ERROR_INVALID_ARGUMENT for a NULL or destroyed buffer, a range beyond its
 *         size, a location that is neither the host nor a device (the message names the device
 *         count) or a bad stream; CM_ERROR_NOT_SUPPORTED without concurrent managed access;
 *         CM_ERROR_CONTEXT_LOST; other CUDA failures as recorded.
 */
CM_API cm_status_t cm_managed_prefetch(cm_stream_t *stream, cm_managed_t *m, size_t offset,
                                       size_t bytes, int location);

/** @brief Usage hints of cm_managed_advise() (cudaMemAdvise). */
typedef enum cm_advice {
    CM_ADVISE_READ_MOSTLY = 1,            /**< mostly read: processors that read it keep
                                               read-only copies (location ignored) */
    CM_ADVISE_UNSET_READ_MOSTLY = 2,      /**< undo CM_ADVISE_READ_MOSTLY (location ignored) */
    CM_ADVISE_PREFERRED_LOCATION = 3,     /**< keep the pages at location; others map them */
    CM_ADVISE_UNSET_PREFERRED_LOCATION = 4, /**< undo it (location ignored) */
    CM_ADVISE_ACCESSED_BY = 5,            /**< location accesses it: keep it mapped there */
    CM_ADVISE_UNSET_ACCESSED_BY = 6       /**< undo it for location */
} cm_advice_t;

/**
 * @brief Advise the driver how a range of managed memory is used (cudaMemAdvise).
 *
 * A device location for CM_ADVISE_PREFERRED_LOCATION and CM_ADVISE_ACCESSED_BY needs
 * concurrentManagedAccess on that device (CM_ERROR_NOT_SUPPORTED otherwise, naming it).
 *
 * @param[in] m         the buffer.
 * @param[in] offset    byte offset of the range (CUDA widens it to whole pages).
 * @param[in] bytes     length of the range; 0 does nothing (after the checks).
 * @param[in] advice    the hint.
 * @param[in] location  a device ordinal or CM_LOCATION_HOST; ignored by the hints that say so.
 * @return CM_OK; CM_ERROR_INVALID_ARGUMENT for a NULL or destroyed buffer, a range beyond its
 *         size, an advice outside the enum or a bad location; CM_ERROR_NOT_SUPPORTED as above;
 *         CM_ERROR_CONTEXT_LOST; other CUDA failures as recorded.
 * Thread-safe for distinct ranges.
 */
CM_API cm_status_t cm_managed_advise(cm_managed_t *m, size_t offset, size_t bytes,
                                     cm_advice_t advice, int location);

/**
 * @brief Copy host memory into managed memory at dst_offset, checked like
 *        cm_buffer_copy_from_host() (cudaMemcpyAsync with cudaMemcpyDefault).
 * @param[in] stream      NULL: synchronous; or a stream of dst's device: queued there, returns
 *                        at once (keep src unchanged until the copy completes).
 * @param[in] dst         destination.
 * @param[in] dst_offset  byte offset in dst.
 * @param[in] src         source of bytes bytes (host or device memory); may be NULL when bytes
 *                        is 0.
 * @param[in] bytes       bytes to copy.
 * @return CM_OK; CM_ERROR_INVALID_ARGUMENT for a NULL or destroyed dst, a NULL src with
 *         bytes > 0, a range beyond dst's size (the message names offset, length and size) or
 *         a bad stream; nothing is written; CM_ERROR_CONTEXT_LOST; other CUDA failures as
 *         recorded.
 */
CM_API cm_status_t cm_managed_copy_from_host(cm_stream_t *stream, cm_managed_t *dst,
                                             size_t dst_offset, const void *src, size_t bytes);

/**
 * @brief Copy bytes of managed memory from src_offset into host memory, checked like
 *        cm_buffer_copy_to_host().
 * @param[in]  stream      NULL: synchronous; or a stream of src's device: queued there, returns
 *                         at once (read dst after synchronising the stream).
 * @param[in]  src         source.
 * @param[in]  src_offset  byte offset in src.
 * @param[out] dst         destination of bytes bytes; may be NULL when bytes is 0.
 * @param[in]  bytes       bytes to copy.
 * @return CM_OK; CM_ERROR_INVALID_ARGUMENT for a NULL or destroyed src, a NULL dst with
 *         bytes > 0, a range beyond src's size or a bad stream; dst is untouched;
 *         CM_ERROR_CONTEXT_LOST; other CUDA failures as recorded.
 */
CM_API cm_status_t cm_managed_copy_to_host(cm_stream_t *stream, const cm_managed_t *src,
                                           size_t src_offset, void *dst, size_t bytes);

CM_EXTERN_C_END

#endif /* CUDAMODEL_MEMSPACE_H */
