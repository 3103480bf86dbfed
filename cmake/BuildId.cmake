# Writes ${CMAKE_BINARY_DIR}/generated/build_id.h with the git revision and a dirty flag,
# refreshed on every build (not only at configure time).
set(DITBENCH_GENERATED_DIR ${CMAKE_BINARY_DIR}/generated)
file(MAKE_DIRECTORY ${DITBENCH_GENERATED_DIR})
add_custom_target(ditbench_build_id
  COMMAND ${CMAKE_COMMAND} -DSOURCE_DIR=${PROJECT_SOURCE_DIR}
          -DOUTPUT=${DITBENCH_GENERATED_DIR}/build_id.h
          -P ${PROJECT_SOURCE_DIR}/cmake/WriteBuildId.cmake
  BYPRODUCTS ${DITBENCH_GENERATED_DIR}/build_id.h
  COMMENT "Recording build id")
