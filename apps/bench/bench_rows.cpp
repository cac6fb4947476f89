#include "apps/bench/bench_rows.h"

#include <algorithm>
#include <cstdio>
#include <fstream>

#include "engine/error.h"
#include "apps/json.h"

namespace tvlm {

void tag_rows(std::vector<Row>& rows, const std::string& suite) {
    for (Row& r : rows)
        if (r.suite.empty()) r.suite = suite;
}

void print_rows(const std::string& title, const std::vector<Row>& rows,
                const std::vector<std::pair<std::string, std::string>>& notes) {
    std::printf("\n%s\n", title.c_str());
    std::printf("%-72s %-44s %10s %10s %9s %8s %7s\n", "job", "method", "median us", "min us", "floor us", "x floor",
                "x best");
    std::string suite = "\x01";
    for (const Row& r : rows) {
        if (r.suite != suite) {
            suite = r.suite;
            std::string note;
            for (const auto& [name, text] : notes)
                if (name == suite) note = text;
            if (!suite.empty()) std::printf("-- %s%s%s\n", suite.c_str(), note.empty() ? "" : ": ", note.c_str());
        }
        double best = r.median_us;
        for (const Row& o : rows)
            if (o.job == r.job) best = std::min(best, o.median_us);
        // Rows without a byte floor (decoders, steps whose bytes depend on the content) show "-".
        if (r.floor_us > 0)
            std::printf("%-72s %-44s %10.2f %10.2f %9.2f %8.1f %7.2f\n", r.job.c_str(), r.method.c_str(), r.median_us,
                        r.min_us, r.floor_us, r.median_us / r.floor_us, r.median_us / best);
        else
            std::printf("%-72s %-44s %10.2f %10.2f %9s %8s %7.2f\n", r.job.c_str(), r.method.c_str(), r.median_us,
                        r.min_us, "-", "-", r.median_us / best);
    }
}

void write_rows_json(const std::string& path, const BenchMachine& machine, const std::vector<Row>& rows) {
    std::ofstream json(path);
    if (!json) throw Error("cannot write '" + path + "': check the directory exists and is writable");
    json << "{\"gpu\": " << json_quote(machine.gpu) << ", \"driver\": " << json_quote(machine.driver)
         << ", \"device_copy_tb_s\": " << machine.copy_bandwidth * 1e-12
         << ", \"pinned_upload_gb_s\": " << machine.upload_bandwidth * 1e-9 << ", \"rows\": [";
    for (size_t i = 0; i < rows.size(); ++i)
        json << (i ? ",\n  " : "\n  ") << "{\"suite\": " << json_quote(rows[i].suite)
             << ", \"job\": " << json_quote(rows[i].job) << ", \"method\": " << json_quote(rows[i].method)
             << ", \"median_us\": " << rows[i].median_us << ", \"min_us\": " << rows[i].min_us
             << ", \"floor_us\": " << rows[i].floor_us << "}";
    json << "\n]}\n";
    json.close();
    if (!json) throw Error("cannot write '" + path + "' (disk full?)");
}

}  // namespace tvlm
