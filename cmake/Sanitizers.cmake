# Sanitized and fuzzing builds (issue 14). Included before any folder so the
# flags reach every target, the plugin .so files and test fixtures included:
# a plugin loaded by dlopen into a sanitized process must be instrumented too,
# or its bugs go unseen.
#
#   -DRIDGELINE_SANITIZE=ON  ASan + UBSan (gcc or clang); any UB aborts the
#                            test (-fno-sanitize-recover=undefined).
#   -DRIDGELINE_FUZZ=ON      libFuzzer targets in tests/fuzz (clang only);
#                            implies RIDGELINE_SANITIZE.
option(RIDGELINE_SANITIZE "Build everything with AddressSanitizer + UBSan" OFF)
option(RIDGELINE_FUZZ "Build the libFuzzer targets in tests/fuzz (clang)" OFF)

if(RIDGELINE_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang" OR
     NOT CMAKE_C_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR
      "RIDGELINE_FUZZ=ON needs clang (libFuzzer); this build uses "
      "${CMAKE_CXX_COMPILER_ID} ${CMAKE_CXX_COMPILER_VERSION}. Configure a "
      "fresh build folder with -DCMAKE_C_COMPILER=clang-14 "
      "-DCMAKE_CXX_COMPILER=clang++-14 (or run scripts/fuzz.sh).")
  endif()
  set(RIDGELINE_SANITIZE ON CACHE BOOL "" FORCE)
endif()

if(RIDGELINE_SANITIZE)
  set(RIDGELINE_SANITIZER_FLAGS
      -fsanitize=address,undefined -fno-sanitize-recover=undefined
      -fno-omit-frame-pointer)
  # C and C++ only: nvcc (bench/gpu) does not take these flags.
  add_compile_options("$<$<COMPILE_LANGUAGE:C,CXX>:${RIDGELINE_SANITIZER_FLAGS}>")
  add_link_options("$<$<LINK_LANGUAGE:C,CXX>:${RIDGELINE_SANITIZER_FLAGS}>")
endif()

if(RIDGELINE_FUZZ)
  # Coverage instrumentation everywhere; only the fuzz targets link libFuzzer's
  # main (-fsanitize=fuzzer in tests/fuzz).
  add_compile_options("$<$<COMPILE_LANGUAGE:C,CXX>:-fsanitize=fuzzer-no-link>")
endif()
