# The one CUDA-call table (src/core/calls.h) is the only way src/ reaches CUDA and NCCL: every
# call goes through cm__cuda.<member>(...), which is what lets the host tests simulate a GPU and
# fail any call; NVML goes through its own table there, cm__nvml. This check fails when a file of
# src/ calls a cuda*, cu*, nccl* or nvml* function directly.
#
# Two modes in one file:
#  - included by tests/CMakeLists.txt (like every tests/*.cmake): registers the ctest test
#    check_cuda_calls (label host);
#  - run as a script, cmake -DSRC=<repo>/src -P tests/check_calls.cmake: the check itself.
#
# The check strips comments, string and character literals from every src/**/*.c and *.h, then
# looks for an identifier cuda[A-Z]..., cu[A-Z]..., nccl[A-Z]... or nvml[A-Z]... followed by "(" (spaces
# allowed) outside src/core/calls.h and src/core/calls.c. Types, enumerators and macros are not
# followed by "(" and pass (cudaStream_t, cudaSuccess, cudaStreamLegacy); so do cudaOcc*, the
# header-only occupancy calculator of cuda_occupancy.h. Each offender is reported as
# file:line with the function and the table member to use instead (or that the table lacks it).
# It also prints how many entries the call table has.

if(NOT CMAKE_SCRIPT_MODE_FILE)
  add_test(NAME check_cuda_calls
    COMMAND ${CMAKE_COMMAND} "-DSRC=${PROJECT_SOURCE_DIR}/src" -P "${CMAKE_CURRENT_LIST_FILE}")
  set_tests_properties(check_cuda_calls PROPERTIES LABELS "host" TIMEOUT 300)
  return()
endif()

if(NOT DEFINED SRC)
  get_filename_component(SRC "${CMAKE_CURRENT_LIST_DIR}/../src" ABSOLUTE)
endif()
if(NOT EXISTS "${SRC}/core/calls.h")
  message(FATAL_ERROR "check_calls: ${SRC}/core/calls.h not found (pass -DSRC=<repo>/src)")
endif()

# Text of a file with comments, string and character literals blanked, line structure kept,
# as a CMake list of lines in ${out}. Characters that CMake lists treat specially (; [ ] \)
# are replaced by placeholders first; escapes inside literals are dropped before that.
function(cm_stripped_lines file out)
  file(READ "${file}" text)
  string(REPLACE "\r" "" text "${text}")
  string(REPLACE "\\\\" "" text "${text}")  # \\ (an escaped backslash)
  string(REPLACE "\\\"" "" text "${text}")  # \" inside strings
  string(REPLACE "\\'" "" text "${text}")   # \' inside character literals
  string(REPLACE "\\" "<BS>" text "${text}")
  string(REPLACE ";" "<SC>" text "${text}")
  string(REPLACE "[" "<LB>" text "${text}")
  string(REPLACE "]" "<RB>" text "${text}")
  string(REPLACE "\n" ";" lines "${text}")
  set(result "")
  set(in_block 0)
  foreach(line IN LISTS lines)
    if(in_block)
      string(FIND "${line}" "*/" end)
      if(end EQUAL -1)
        list(APPEND result " ")
        continue()
      endif()
      math(EXPR end "${end} + 2")
      string(SUBSTRING "${line}" ${end} -1 line)
      set(in_block 0)
    endif()
    # blank the tokens from left to right: the leftmost of a closed block comment, a block
    # comment left open at the end of the line, a line comment, a string, a character literal
    set(done "")
    while(line MATCHES "[/\"']")
      string(REGEX MATCH "/\\*([^*]|\\*+[^*/])*\\*+/|/\\*.*$|//.*$|\"[^\"]*\"|'[^']*'" tok "${line}")
      if(tok STREQUAL "")
        break()
      endif()
      string(FIND "${line}" "${tok}" at)
      string(LENGTH "${tok}" len)
      string(SUBSTRING "${line}" 0 ${at} before)
      string(APPEND done "${before} ")
      if(tok MATCHES "^/\\*" AND NOT tok MATCHES "^/\\*.*\\*/$")
        set(in_block 1)
        set(line "")
        break()
      endif()
      math(EXPR after "${at} + ${len}")
      string(SUBSTRING "${line}" ${after} -1 line)
    endwhile()
    set(line "${done}${line}")
    if(line STREQUAL "")
      set(line " ")
    endif()
    list(APPEND result "${line}")
  endforeach()
  set(${out} "${result}" PARENT_SCOPE)
endfunction()

# ---------------------------------------------------------------- the call table
cm_stripped_lines("${SRC}/core/calls.h" table_lines)
string(REPLACE ";" "\n" table_text "${table_lines}")
string(REGEX MATCHALL "X\\([ \t]*[a-z_0-9]+[ \t]*,[ \t]*[A-Za-z_0-9]+[ \t]*\\)" entries "${table_text}")
set(n_entries 0)
set(n_cuda 0)
set(n_nccl 0)
set(n_nvml 0)
foreach(e IN LISTS entries)
  string(REGEX REPLACE "X\\([ \t]*([a-z_0-9]+)[ \t]*,[ \t]*([A-Za-z_0-9]+)[ \t]*\\)" "\\1" member "${e}")
  string(REGEX REPLACE "X\\([ \t]*([a-z_0-9]+)[ \t]*,[ \t]*([A-Za-z_0-9]+)[ \t]*\\)" "\\2" fn "${e}")
  set(cm_member_of_${fn} "${member}")
  math(EXPR n_entries "${n_entries} + 1")
  if(fn MATCHES "^nccl")
    math(EXPR n_nccl "${n_nccl} + 1")
  elseif(fn MATCHES "^cm__nvml_")
    math(EXPR n_nvml "${n_nvml} + 1")
  else()
    math(EXPR n_cuda "${n_cuda} + 1")
  endif()
endforeach()
message("check_calls: the call table (src/core/calls.h) has ${n_entries} entries "
  "(${n_cuda} CUDA runtime, driver and library launchers; ${n_nccl} NCCL; ${n_nvml} NVML, in "
  "the table cm__nvml)")
if(n_entries EQUAL 0)
  message(FATAL_ERROR "check_calls: no X(member, function) entry found in ${SRC}/core/calls.h")
endif()

# ---------------------------------------------------------------- every file of src/
file(GLOB_RECURSE sources LIST_DIRECTORIES false "${SRC}/*.c" "${SRC}/*.h")
list(SORT sources)
set(offenders 0)
set(n_files 0)
foreach(f IN LISTS sources)
  file(RELATIVE_PATH rel "${SRC}" "${f}")
  if(rel STREQUAL "core/calls.h" OR rel STREQUAL "core/calls.c")
    continue()
  endif()
  math(EXPR n_files "${n_files} + 1")
  cm_stripped_lines("${f}" lines)
  set(lineno 0)
  foreach(line IN LISTS lines)
    math(EXPR lineno "${lineno} + 1")
    if(NOT line MATCHES "(cuda|cu|nccl|nvml)[A-Z]")
      continue()
    endif()
    string(REGEX MATCHALL "(^|[^A-Za-z0-9_])(cuda[A-Z]|cu[A-Z]|nccl[A-Z]|nvml[A-Z])[A-Za-z0-9_]*[ \t]*\\("
      calls "${line}")
    foreach(c IN LISTS calls)
      string(REGEX REPLACE "^[^A-Za-z0-9_]?([A-Za-z0-9_]+)[ \t]*\\($" "\\1" fn "${c}")
      if(fn MATCHES "^cudaOcc")
        continue()
      endif()
      math(EXPR offenders "${offenders} + 1")
      if(DEFINED cm_member_of_${fn} AND NOT fn MATCHES "^cm__nvml_")
        set(fix "call cm__cuda.${cm_member_of_${fn}}(...) instead")
      elseif(fn MATCHES "^nvml")
        set(fix "call it through the table cm__nvml (src/core/calls.h), or add an entry there")
      else()
        set(fix "it is not in the call table: ask for an entry in src/core/calls.h")
      endif()
      message("src/${rel}:${lineno}: ${fn}() called directly; ${fix}")
    endforeach()
  endforeach()
endforeach()

if(offenders GREATER 0)
  message(FATAL_ERROR "check_calls: ${offenders} direct CUDA/NCCL/NVML call(s) in src/ outside "
    "src/core/calls.h and src/core/calls.c (${n_files} files checked); every call goes through "
    "the table cm__cuda (src/core/calls.h)")
endif()
message("check_calls: ${n_files} files of src/ checked, no direct CUDA, NCCL or NVML call")
