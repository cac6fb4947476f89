#pragma once
// --plot FILE.png of the benchmark suites: one horizontal bar chart per suite, a group of
// bars per job (one per method, median GPU time on a log scale) with the job's floor
// marked, so "how far from the floor" and "which path wins" read at a glance.
#include <string>
#include <vector>

#include "image_io.h"

namespace tvlm {

struct Row;

Rgba8Image bar_chart(const std::string& title, const std::vector<Row>& rows);

}  // namespace tvlm
