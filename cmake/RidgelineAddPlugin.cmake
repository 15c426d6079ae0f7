# SPDX-License-Identifier: Apache-2.0
# ridgeline_add_plugin(<family> SOURCES <src>... [OUTPUT_DIRECTORY <dir>]
#                      [INSTALL_DESTINATION <dir>] [NO_INSTALL])
#
# Builds one hardware plugin: a MODULE library target `ridgeline_<family>`
# whose file is `libridgeline-<family>.so`, compiled with hidden visibility and
# linked with a version script so that `ridgeline_plugin_entry` is the only
# exported symbol. Used by the in-tree plugins, the test fixtures and (through
# the installed RidgelinePlugin package) by vendors building out of tree.
#
#   OUTPUT_DIRECTORY     where the .so lands (default: RIDGELINE_BUILD_PLUGIN_DIR
#                        when set, else the current binary dir)
#   INSTALL_DESTINATION  install folder (default: RIDGELINE_PLUGIN_INSTALL_DIR
#                        when set, else <libdir>/ridgeline/plugins)
#   NO_INSTALL           no install() rule (test fixtures)
include_guard(GLOBAL)
include(GNUInstallDirs)

function(ridgeline_add_plugin family)
  cmake_parse_arguments(PARSE_ARGV 1 ARG "NO_INSTALL"
                        "OUTPUT_DIRECTORY;INSTALL_DESTINATION" "SOURCES")
  if(NOT ARG_SOURCES)
    message(FATAL_ERROR "ridgeline_add_plugin(${family}): SOURCES is required")
  endif()
  if(NOT family MATCHES "^[a-z0-9]+(-[a-z0-9]+)*$")
    message(FATAL_ERROR "ridgeline_add_plugin: family '${family}' must be lower-case kebab")
  endif()
  set(target ridgeline_${family})
  string(REPLACE "-" "_" target "${target}")

  if(ARG_OUTPUT_DIRECTORY)
    set(out_dir "${ARG_OUTPUT_DIRECTORY}")
  elseif(DEFINED RIDGELINE_BUILD_PLUGIN_DIR)
    set(out_dir "${RIDGELINE_BUILD_PLUGIN_DIR}")
  else()
    set(out_dir "${CMAKE_CURRENT_BINARY_DIR}")
  endif()

  add_library(${target} MODULE ${ARG_SOURCES})
  target_link_libraries(${target} PRIVATE ridgeline::plugin_abi)
  set_target_properties(${target} PROPERTIES
    PREFIX "lib"
    OUTPUT_NAME "ridgeline-${family}"
    C_VISIBILITY_PRESET hidden
    CXX_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON
    LIBRARY_OUTPUT_DIRECTORY "${out_dir}")
  if(DEFINED RIDGELINE_WARNINGS)
    target_compile_options(${target} PRIVATE ${RIDGELINE_WARNINGS})
  endif()
  # Descriptors rely on "omitted field = 0 = unknown"; GCC's -Wextra flags
  # every omitted member of a C++ designated initializer.
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wno-missing-field-initializers>)

  # Visibility alone still exports template instantiations and C++ runtime
  # bits; the version script makes the entry point the only dynamic symbol.
  set(map "${CMAKE_CURRENT_BINARY_DIR}/${target}.map")
  file(WRITE "${map}"
       "{\n  global:\n    ridgeline_plugin_entry;\n  local:\n    *;\n};\n")
  target_link_options(${target} PRIVATE "LINKER:--version-script=${map}")
  # clang's sanitizer runtime lives in the executable, so a sanitized in-tree
  # build (cmake/Sanitizers.cmake) leaves __asan_* undefined in the plugin.
  if(NOT (RIDGELINE_SANITIZE AND CMAKE_C_COMPILER_ID STREQUAL "Clang"))
    target_link_options(${target} PRIVATE "LINKER:--no-undefined")
  endif()
  set_property(TARGET ${target} APPEND PROPERTY LINK_DEPENDS "${map}")

  if(NOT ARG_NO_INSTALL)
    if(ARG_INSTALL_DESTINATION)
      set(dest "${ARG_INSTALL_DESTINATION}")
    elseif(DEFINED RIDGELINE_PLUGIN_INSTALL_DIR)
      set(dest "${RIDGELINE_PLUGIN_INSTALL_DIR}")
    else()
      set(dest "${CMAKE_INSTALL_LIBDIR}/ridgeline/plugins")
    endif()
    install(TARGETS ${target} LIBRARY DESTINATION "${dest}" COMPONENT plugins)
  endif()
endfunction()
