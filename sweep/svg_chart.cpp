#include "sweep/svg_chart.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace attnsim::sweep {

namespace {

constexpr double kWidth = 820, kHeight = 340;
constexpr double kLeft = 80, kRight = 290, kTop = 36, kBottom = 56;
constexpr const char* kPalette[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                                    "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22"};

const char* colour(std::size_t i) { return kPalette[i % (sizeof kPalette / sizeof *kPalette)]; }

std::string number(double v) {
  char buf[32];
  const double a = std::fabs(v);
  if (a != 0 && (a >= 1e6 || a < 1e-3)) std::snprintf(buf, sizeof buf, "%.3g", v);
  else std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

// A "nice" tick step for [0, max] in about five steps.
double tick_step(double max) {
  if (!(max > 0)) return 1;
  const double raw = max / 5;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  for (const double m : {1.0, 2.0, 2.5, 5.0, 10.0}) {
    if (raw <= m * mag) return m * mag;
  }
  return 10 * mag;
}

struct Frame {
  double y_max = 1, step = 1;
  double plot_w = kWidth - kLeft - kRight, plot_h = kHeight - kTop - kBottom;
  double y(double v) const { return kTop + plot_h * (1 - v / y_max); }
};

void x_labels(const ChartLabels& l, const Frame& f, double slot, std::ostringstream& os);

// The frame, axes, ticks, labels and legend; the caller adds the marks in slots of the returned width.
double open_chart(const char* kind, const ChartLabels& l, const std::vector<Series>& series, Frame& f,
                       std::ostringstream& os) {
  double max = 0;
  for (const auto& s : series)
    for (const double v : s.y)
      if (std::isfinite(v)) max = std::max(max, v);
  f.step = tick_step(max);
  f.y_max = std::max(f.step, std::ceil(max / f.step) * f.step);
  os << "<svg class=\"chart " << kind << "\" xmlns=\"http://www.w3.org/2000/svg\" width=\"" << kWidth << "\" height=\""
     << kHeight << "\" viewBox=\"0 0 " << kWidth << " " << kHeight << "\" font-family=\"sans-serif\" font-size=\"11\">"
     << "<title>" << html_escape(l.title) << "</title>"
     << "<text x=\"" << kLeft << "\" y=\"18\" font-size=\"13\" font-weight=\"bold\">" << html_escape(l.title) << "</text>";
  for (double v = 0; v <= f.y_max + f.step / 2; v += f.step) {
    os << "<line x1=\"" << kLeft << "\" x2=\"" << kLeft + f.plot_w << "\" y1=\"" << f.y(v) << "\" y2=\"" << f.y(v)
       << "\" stroke=\"#ddd\"/><text x=\"" << kLeft - 6 << "\" y=\"" << f.y(v) + 4 << "\" text-anchor=\"end\">"
       << number(v) << "</text>";
  }
  os << "<line x1=\"" << kLeft << "\" x2=\"" << kLeft << "\" y1=\"" << kTop << "\" y2=\"" << kTop + f.plot_h
     << "\" stroke=\"#333\"/><line x1=\"" << kLeft << "\" x2=\"" << kLeft + f.plot_w << "\" y1=\"" << kTop + f.plot_h
     << "\" y2=\"" << kTop + f.plot_h << "\" stroke=\"#333\"/>";
  os << "<text transform=\"translate(16," << kTop + f.plot_h / 2 << ") rotate(-90)\" text-anchor=\"middle\">"
     << html_escape(l.y_label) << "</text><text x=\"" << kLeft + f.plot_w / 2 << "\" y=\"" << kHeight - 10
     << "\" text-anchor=\"middle\">" << html_escape(l.x_label) << "</text>";
  for (std::size_t i = 0; i < series.size(); ++i) {
    const double y = kTop + 8 + 16.0 * static_cast<double>(i);
    os << "<rect x=\"" << kWidth - kRight + 14 << "\" y=\"" << y - 8 << "\" width=\"10\" height=\"10\" fill=\""
       << colour(i) << "\"/><text x=\"" << kWidth - kRight + 30 << "\" y=\"" << y + 1 << "\">"
       << html_escape(series[i].name.size() > 46 ? series[i].name.substr(0, 45) + "…" : series[i].name) << "</text>";
  }
  const double slot = f.plot_w / static_cast<double>(std::max<std::size_t>(1, l.x_labels.size()));
  x_labels(l, f, slot, os);
  return slot;
}

void x_labels(const ChartLabels& l, const Frame& f, double slot, std::ostringstream& os) {
  for (std::size_t c = 0; c < l.x_labels.size(); ++c) {
    const double x = kLeft + slot * (static_cast<double>(c) + 0.5);
    os << "<text x=\"" << x << "\" y=\"" << kTop + f.plot_h + 16 << "\" text-anchor=\"middle\">"
       << html_escape(l.x_labels[c]) << "</text>";
  }
}

}  // namespace

std::string html_escape(const std::string& s) {
  std::string out;
  for (const char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string line_chart(const ChartLabels& l, const std::vector<Series>& series) {
  std::ostringstream os;
  Frame f;
  const double slot = open_chart("line", l, series, f, os);
  for (std::size_t i = 0; i < series.size(); ++i) {
    std::string points;
    const auto flush = [&] {
      if (!points.empty()) os << "<polyline fill=\"none\" stroke=\"" << colour(i) << "\" stroke-width=\"2\" points=\"" << points << "\"/>";
      points.clear();
    };
    for (std::size_t c = 0; c < series[i].y.size() && c < l.x_labels.size(); ++c) {
      const double v = series[i].y[c];
      if (!std::isfinite(v)) {
        flush();
        continue;
      }
      const double x = kLeft + slot * (static_cast<double>(c) + 0.5);
      if (!points.empty()) points += ' ';
      points += number(x);
      points += ',';
      points += number(f.y(v));
      os << "<circle cx=\"" << x << "\" cy=\"" << f.y(v) << "\" r=\"3\" fill=\"" << colour(i) << "\"><title>"
         << html_escape(series[i].name) << ": " << number(v) << "</title></circle>";
    }
    flush();
  }
  os << "</svg>";
  return os.str();
}

std::string bar_chart(const ChartLabels& l, const std::vector<Series>& series) {
  std::ostringstream os;
  Frame f;
  const double slot = open_chart("bar", l, series, f, os);
  const double bar = slot * 0.8 / static_cast<double>(std::max<std::size_t>(1, series.size()));
  for (std::size_t i = 0; i < series.size(); ++i) {
    for (std::size_t c = 0; c < series[i].y.size() && c < l.x_labels.size(); ++c) {
      const double v = series[i].y[c];
      if (!std::isfinite(v)) continue;
      const double x = kLeft + slot * (static_cast<double>(c) + 0.1) + bar * static_cast<double>(i);
      os << "<rect x=\"" << x << "\" y=\"" << f.y(v) << "\" width=\"" << bar << "\" height=\"" << f.y(0) - f.y(v)
         << "\" fill=\"" << colour(i) << "\"><title>" << html_escape(series[i].name) << ", " << html_escape(l.x_labels[c])
         << ": " << number(v) << "</title></rect>";
    }
  }
  os << "</svg>";
  return os.str();
}

}  // namespace attnsim::sweep
