#include "bench_rows.h"

#include <algorithm>
#include <cstdio>
#include <fstream>

#include "error.h"
#include "json.h"

namespace tvlm {

void print_rows(const std::string& title, const std::vector<Row>& rows) {
    std::printf("\n%s\n", title.c_str());
    std::printf("%-72s %-32s %9s %9s %9s %8s %8s\n", "job", "method", "median us", "min us", "floor us", "x floor",
                "x best");
    for (const Row& r : rows) {
        double best = r.median_us;
        for (const Row& o : rows)
            if (o.job == r.job) best = std::min(best, o.median_us);
        std::printf("%-72s %-32s %9.2f %9.2f %9.2f %8.1f %8.2f\n", r.job.c_str(), r.method.c_str(), r.median_us,
                    r.min_us, r.floor_us, r.median_us / r.floor_us, r.median_us / best);
    }
}

void write_rows_json(const std::string& path, const std::string& suite, const std::string& gpu, double copy_bandwidth,
                     const std::vector<Row>& rows) {
    std::ofstream json(path);
    if (!json) throw Error("cannot write '" + path + "'");
    json << "{\"suite\": " << json_quote(suite) << ", \"gpu\": " << json_quote(gpu)
         << ", \"device_copy_tb_s\": " << copy_bandwidth * 1e-12 << ", \"rows\": [";
    for (size_t i = 0; i < rows.size(); ++i)
        json << (i ? ",\n  " : "\n  ") << "{\"job\": " << json_quote(rows[i].job) << ", \"method\": "
             << json_quote(rows[i].method) << ", \"median_us\": " << rows[i].median_us << ", \"min_us\": "
             << rows[i].min_us << ", \"floor_us\": " << rows[i].floor_us << "}";
    json << "\n]}\n";
    if (!json) throw Error("cannot write '" + path + "'");
}

}  // namespace tvlm
