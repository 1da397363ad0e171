/* Run-time version of the library (version.h). */
#include <cudamodel/version.h>

unsigned int cm_version_number(void) {
    return (unsigned int)CM_VERSION_NUMBER;
}

const char *cm_version_string(void) {
    return CM_VERSION_STRING;
}
