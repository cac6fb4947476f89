#pragma once
// --plot FILE.png of the benchmark suites: one horizontal bar chart per suite, a group of
// bars per job (one per method, median GPU time on a log scale) with the job's floor
// marked, so "how far from the floor" and "which path wins" read at a glance.
#include <string>
#include <vector>

#include "engine/image_files/image_files.h"

namespace tvlm {

struct Row;

// `axis` says what the bars are (e.g. "median GPU time per launch").
Rgba8Image bar_chart(const std::string& title, const std::vector<Row>& rows,
                     const std::string& axis = "median GPU time per launch");
// Charts one above the other (one per suite), as one image.
Rgba8Image stack_charts(const std::vector<Rgba8Image>& charts);

}  // namespace tvlm
