/* Run-time version of the library (version.h). */
#include <cudamodel/version.h>

const char *cm_version_string(void) {
    return CM_VERSION_STRING;
}
