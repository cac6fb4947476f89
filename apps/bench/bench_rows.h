#pragma once
// Benchmark results as rows: a suite, a job, a method, its median and min time and the
// job's floor; printed as one table, written as --json and drawn as --plot (bench_plot.h).
#include <string>
#include <vector>

namespace tvlm {

struct Row {
    std::string job, method;
    double median_us = 0, min_us = 0, floor_us = 0;
    std::string suite;  // set by the suite that measured the row
};

// What the run measured its floors against.
struct BenchMachine {
    std::string gpu, driver;
    double copy_bandwidth = 0;    // device copy, bytes read + written per second
    double upload_bandwidth = 0;  // pinned host -> device, bytes per second
};

// Sets `suite` on every row that has none.
void tag_rows(std::vector<Row>& rows, const std::string& suite);

// One table of all rows (x floor, and x best among the rows of the same job), a header
// line per suite saying what its times are (`notes`: suite, then note, pairs).
void print_rows(const std::string& title, const std::vector<Row>& rows,
                const std::vector<std::pair<std::string, std::string>>& notes = {});
void write_rows_json(const std::string& path, const BenchMachine& machine, const std::vector<Row>& rows);

}  // namespace tvlm
