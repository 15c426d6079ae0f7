# cmake -DCHECK=<ridgeline-plugin-check> -DPLUGIN_DIR=<dir> -P check_all.cmake
# Runs the checker on every .so in PLUGIN_DIR at once; fails when none exist.
file(GLOB plugins "${PLUGIN_DIR}/*.so")
list(SORT plugins)
list(LENGTH plugins count)
if(count EQUAL 0)
  message(FATAL_ERROR "no plugin .so files in ${PLUGIN_DIR}")
endif()
execute_process(COMMAND "${CHECK}" --iterations 5 ${plugins} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "ridgeline-plugin-check failed (exit ${rc}) on ${count} plugins")
endif()
