/**
 * @file cudamodel.h
 * @brief Umbrella header: every public module of libcudamodel except interop.h (which pulls in
 *        CUDA's own headers; include it where you write CUDA calls yourself).
 */
#ifndef CUDAMODEL_CUDAMODEL_H
#define CUDAMODEL_CUDAMODEL_H

#include <cudamodel/buffer.h>
#include <cudamodel/device.h>
#include <cudamodel/diag.h>
#include <cudamodel/export.h>
#include <cudamodel/kernels.h>
#include <cudamodel/launch.h>
#include <cudamodel/memspace.h>
#include <cudamodel/multi.h>
#include <cudamodel/status.h>
#include <cudamodel/stream.h>
#include <cudamodel/version.h>

#endif /* CUDAMODEL_CUDAMODEL_H */
