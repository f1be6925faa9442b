// Small self-contained SVG charts (no script, no network) for the sweep report: lines and grouped
// bars over a categorical x axis.
#pragma once

#include <string>
#include <vector>

namespace attnsim::sweep {

// One named series; a NaN value is a missing point (a gap in the line, no bar).
struct Series {
  std::string name;
  std::vector<double> y;
};

// A chart's labels. x_labels has one entry per category; each series has one value per category.
struct ChartLabels {
  std::string title;
  std::string x_label;
  std::string y_label;
  std::vector<std::string> x_labels;
};

// Contract: the result is one <svg class="chart ..."> element with a <title>, axes with ticks from 0
// to a rounded maximum, and a legend; series beyond the palette reuse its colours.
std::string line_chart(const ChartLabels& labels, const std::vector<Series>& series);
std::string bar_chart(const ChartLabels& labels, const std::vector<Series>& series);

// Escapes &, <, >, " for HTML and SVG text.
std::string html_escape(const std::string& s);

}  // namespace attnsim::sweep
