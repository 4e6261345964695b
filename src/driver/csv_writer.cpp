#include "driver/csv_writer.hpp"

#include <fmt/format.h>

#include <fstream>
#include <stdexcept>

namespace sgemm {
namespace {

// RFC 4180: quote a field that holds a comma, a quote or a line break.
std::string csv_field(const std::string& text) {
    if (text.find_first_of(",\"\n\r") == std::string::npos) return text;
    std::string quoted = "\"";
    for (const char ch : text) {
        if (ch == '"') quoted += '"';
        quoted += ch;
    }
    return quoted + '"';
}

std::string optional_number(const std::optional<double>& value) {
    return value ? fmt::format("{:.6g}", *value) : "";
}

}  // namespace

std::string csv_header() {
    return "stage,name,precision,m,n,k,alpha,beta,median_ms,tflops,cublas_median_ms,cublas_tflops,"
           "ratio_to_cublas,fraction_of_peak,ceiling,rel_error_fp64,worst_error_over_budget,verified,gpu,"
           "driver,cuda,timing,reps,seed,sm_clock_mhz,cublas_sm_clock_mhz,ceiling_sm_clock_mhz,data,kernel,sources";
}

std::string csv_line(const ResultRow& r) {
    return fmt::format("{},{},{},{},{},{},{:.9g},{:.9g},{:.6g},{:.6g},{:.6g},{:.6g},{:.6g},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
                       csv_field(r.stage), csv_field(r.name), csv_field(r.precision), r.m, r.n, r.k, r.alpha,
                       r.beta, r.median_ms, r.tflops, r.cublas_median_ms, r.cublas_tflops,
                       r.ratio_to_cublas, optional_number(r.fraction_of_peak), csv_field(r.ceiling),
                       optional_number(r.rel_error_fp64), optional_number(r.worst_error_over_budget), csv_field(r.verified),
                       csv_field(r.gpu), csv_field(r.driver), csv_field(r.cuda), csv_field(r.timing), r.reps, r.seed,
                       optional_number(r.sm_clock_mhz), optional_number(r.cublas_sm_clock_mhz),
                       optional_number(r.ceiling_sm_clock_mhz), csv_field(r.data), csv_field(r.kernel),
                       csv_field(r.sources));
}

void append_csv_rows(const std::filesystem::path& path, std::span<const ResultRow> rows) {
    std::error_code ignored;
    const bool needs_header = !std::filesystem::exists(path) || std::filesystem::file_size(path, ignored) == 0;
    std::ofstream file(path, std::ios::app);
    if (!file) throw std::runtime_error(fmt::format("cannot write {}", path.string()));
    if (needs_header) file << csv_header() << '\n';
    for (const ResultRow& row : rows) file << csv_line(row) << '\n';
    if (!file) throw std::runtime_error(fmt::format("error writing {}", path.string()));
}

std::string ceilings_csv_header() { return "ceiling,unit,value,gpu,sm_clock_mhz"; }

std::string ceilings_csv_line(const CeilingRow& r) {
    return fmt::format("{},{},{:.6g},{},{}", csv_field(r.ceiling), csv_field(r.unit), r.value, csv_field(r.gpu),
                       optional_number(r.sm_clock_mhz));
}

void write_ceilings_csv(const std::filesystem::path& path, std::span<const CeilingRow> rows) {
    std::ofstream file(path, std::ios::trunc);
    if (!file) throw std::runtime_error(fmt::format("cannot write {}", path.string()));
    file << ceilings_csv_header() << '\n';
    for (const CeilingRow& row : rows) file << ceilings_csv_line(row) << '\n';
    if (!file) throw std::runtime_error(fmt::format("error writing {}", path.string()));
}

}  // namespace sgemm
