#include "tools/table_options.h"

#include <vector>

#include "tools/option_values.h"

namespace atrace::tools {

namespace {

// Splits "a,b,c"; each item parsed by `parse`; a bad one is an OptionError
// naming the option and what it takes.
template <class T, class Parse>
std::vector<T> parse_list(const char* option, const std::string& text, Parse parse,
                          const char* accepted) {
  std::vector<T> out;
  size_t start = 0;
  for (;;) {
    size_t comma = text.find(',', start);
    std::string item = text.substr(start, comma == std::string::npos ? comma : comma - start);
    auto v = parse(item);
    if (!v)
      throw OptionError(std::string(option) + ": '" + item + "' is not a column (" + accepted +
                        ")");
    out.push_back(*v);
    if (comma == std::string::npos) return out;
    start = comma + 1;
  }
}

}  // namespace

void add_table_options(cli::Command cmd, TableArgs& args) {
  cmd.option("--sort", args.sort,
             "Order of the rows, by one column or several (--sort=self,calls: equal self times "
             "by calls): calls, total, self, avg, min, max or name; with kernel events also "
             "offcpu, selfoff, systime, selfsys, syscalls or faults")
      .capture_default()
      .type_name("KEYS")
      .completes(analysis::sort_key_names(), true);
  cmd.option("--fields", args.fields,
             "The table's columns before the name, in order (--fields=calls,self,max): calls, "
             "total, self, avg, min, max, offcpu, selfoff, systime, selfsys, syscalls, faults; "
             "'-' where the trace did not measure it. Default: calls to max, and the kernel "
             "columns of the groups recorded")
      .type_name("COLUMNS")
      .completes(analysis::field_names(), true);
}

void apply_table_options(const TableArgs& args, analysis::ReportOptions& opt) {
  std::vector<analysis::SortKey> keys = parse_list<analysis::SortKey>(
      "--sort", args.sort, analysis::parse_sort_key, analysis::sort_key_names());
  opt.sort = keys.front();
  opt.then_sort.assign(keys.begin() + 1, keys.end());
  if (!args.fields.empty())
    opt.fields = parse_list<analysis::Field>("--fields", args.fields, analysis::parse_field,
                                             analysis::field_names().c_str());
}

}  // namespace atrace::tools
