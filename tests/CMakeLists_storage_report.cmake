# Tests of storage (and its migrations), statistics, the HTML report, `ditbench query` and `ditbench report`;
# included from tests/CMakeLists.txt. cli/query_command.cc and cli/report_command.cc are
# compiled in directly, so these tests do not depend on how the CLI executable is assembled.
include(GoogleTest)

add_executable(ditbench_storage_report_tests
  ${CMAKE_CURRENT_LIST_DIR}/storage/results_db_test.cc
  ${CMAKE_CURRENT_LIST_DIR}/storage/results_view_test.cc
  ${CMAKE_CURRENT_LIST_DIR}/stats/stats_test.cc
  ${CMAKE_CURRENT_LIST_DIR}/stats/distributions_test.cc
  ${CMAKE_CURRENT_LIST_DIR}/stats/change_test.cc
  ${CMAKE_CURRENT_LIST_DIR}/stats/change_points_test.cc
  ${CMAKE_CURRENT_LIST_DIR}/stats/least_squares_test.cc
  ${CMAKE_CURRENT_LIST_DIR}/storage/migration_test.cc
  ${CMAKE_CURRENT_LIST_DIR}/storage/metric_values_test.cc
  ${CMAKE_CURRENT_LIST_DIR}/storage/selfcheck_store_test.cc
  ${CMAKE_CURRENT_LIST_DIR}/storage/read_only_media_test.cc
  ${CMAKE_CURRENT_LIST_DIR}/storage/statement_test.cc
  ${CMAKE_CURRENT_LIST_DIR}/report/html_report_test.cc
  ${CMAKE_CURRENT_LIST_DIR}/report/report_structure_test.cc
  ${CMAKE_CURRENT_LIST_DIR}/report/report_summary_test.cc
  ${CMAKE_CURRENT_LIST_DIR}/cli/query_command_test.cc
  ${CMAKE_CURRENT_LIST_DIR}/cli/compare_command_test.cc
  ${CMAKE_CURRENT_LIST_DIR}/cli/hostile_database_test.cc
  ${CMAKE_CURRENT_LIST_DIR}/analysis/comparison_test.cc
  ${CMAKE_CURRENT_LIST_DIR}/analysis/selfcheck_comparison_test.cc
  ${CMAKE_CURRENT_LIST_DIR}/analysis/seed_folding_test.cc
  ${CMAKE_CURRENT_LIST_DIR}/analysis/row_metrics_test.cc
  ${CMAKE_CURRENT_LIST_DIR}/report/output_file_test.cc
  ${CMAKE_CURRENT_LIST_DIR}/analysis/configuration_group_test.cc
  ${CMAKE_CURRENT_LIST_DIR}/report/report_configurations_test.cc
  ${CMAKE_CURRENT_LIST_DIR}/report/group_charts_test.cc
  ${CMAKE_CURRENT_LIST_DIR}/report/profile_section_test.cc
  ${CMAKE_CURRENT_LIST_DIR}/report/engines_section_test.cc
  ${CMAKE_CURRENT_LIST_DIR}/report/serving_section_test.cc
  ${CMAKE_CURRENT_LIST_DIR}/report/quality_section_test.cc
  ${CMAKE_CURRENT_LIST_DIR}/report/headless_render_test.cc
  ${CMAKE_CURRENT_LIST_DIR}/analysis/history_test.cc
  ${CMAKE_CURRENT_LIST_DIR}/../cli/query_command.cc
  ${CMAKE_CURRENT_LIST_DIR}/../cli/report_command.cc
  ${CMAKE_CURRENT_LIST_DIR}/../cli/compare_command.cc
  ${CMAKE_CURRENT_LIST_DIR}/../cli/history_command.cc
  ${CMAKE_CURRENT_LIST_DIR}/../cli/escaped_error.cc
  ${CMAKE_CURRENT_LIST_DIR}/../cli/format_option.cc
)
ditbench_target(ditbench_storage_report_tests)
target_link_libraries(ditbench_storage_report_tests PRIVATE
  ditbench_plan ditbench_report ditbench_stats ditbench_storage ditbench_sweep
  CLI11::CLI11 fmt::fmt nlohmann_json::nlohmann_json GTest::gtest_main GTest::gmock
)
target_compile_definitions(ditbench_storage_report_tests PRIVATE
  DITBENCH_FIXTURES="${CMAKE_CURRENT_LIST_DIR}/fixtures")
gtest_discover_tests(ditbench_storage_report_tests)
