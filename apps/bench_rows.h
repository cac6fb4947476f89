#pragma once
// Benchmark results as rows: a job, a method, its median and min GPU time and the job's
// floor; printed as a table, written as --json and drawn as --plot (bench_plot.h).
#include <string>
#include <vector>

namespace tvlm {

struct Row {
    std::string job, method;
    double median_us = 0, min_us = 0, floor_us = 0;
};

// The table (x floor, and x best among the rows of the same job).
void print_rows(const std::string& title, const std::vector<Row>& rows);
void write_rows_json(const std::string& path, const std::string& suite, const std::string& gpu, double copy_bandwidth,
                     const std::vector<Row>& rows);

}  // namespace tvlm
