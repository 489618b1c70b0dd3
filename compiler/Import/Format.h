//===- Format.h - numbers as the importer prints them -----------*- C++ -*-===//
//
// Part of sgc. Shared by the importer's diagnostics and `sgc explain`.
//
//===----------------------------------------------------------------------===//

#ifndef SGC_COMPILER_IMPORT_FORMAT_H
#define SGC_COMPILER_IMPORT_FORMAT_H

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace mlir::sgc::import {

/// 22313697280 -> "22,313,697,280".
inline std::string withCommas(int64_t value) {
  std::string digits = std::to_string(value < 0 ? -(value + 1) + 1ull
                                                : static_cast<uint64_t>(value));
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0)
      out += ',';
    out += digits[i];
  }
  return value < 0 ? "-" + out : out;
}

/// The shortest text that reads back as `value`; integral values keep one
/// decimal ("62.0") so they read as floating point.
inline std::string formatDouble(double value) {
  if (!std::isfinite(value))
    return std::isnan(value) ? "nan" : (value < 0 ? "-inf" : "inf");
  char buf[64];
  if (value == std::floor(value) && std::fabs(value) < 1e15) {
    std::snprintf(buf, sizeof(buf), "%.1f", value);
    return buf;
  }
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof(buf), "%.*g", precision, value);
    if (std::strtod(buf, nullptr) == value)
      break;
  }
  return buf;
}

/// A value rounded to f32 (or narrower, e.g. bf16) as the shortest text
/// that reads back as the same f32: 61.967735f -> "61.967735", 62 -> "62.0".
inline std::string formatFloat(double value) {
  float f = static_cast<float>(value);
  if (!std::isfinite(f) || static_cast<double>(f) != value)
    return formatDouble(value);
  if (f == std::floor(f) && std::fabs(f) < 1e7f)
    return formatDouble(value);
  char buf[64];
  for (int precision = 1; precision <= 9; ++precision) {
    std::snprintf(buf, sizeof(buf), "%.*g", precision, value);
    if (std::strtof(buf, nullptr) == f)
      break;
  }
  return buf;
}

} // namespace mlir::sgc::import

#endif // SGC_COMPILER_IMPORT_FORMAT_H
