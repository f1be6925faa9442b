// `# src:` comments: parsing, and the check that every value cites a known source.
#include <doctest/doctest.h>

#include "arch/provenance.h"

using namespace attnsim::arch;

namespace {
const SourceRegistry& registry() {
  static const SourceRegistry reg = SourceRegistry::from_markdown(
      "| key | source |\n|---|---|\n| `derived` | arithmetic |\n| `estimate` | guess |\n"
      "| `CDNA3-WP` | white paper |\n| `SHARK` | guide |\n");
  return reg;
}
}  // namespace

TEST_CASE("a source comment gives its keys and detail") {
  const auto tag = source_tag_of_line("cus_per_xcd = 38  # src: CDNA3-WP, SHARK (40 physical, 2 fused off)");
  REQUIRE(tag.has_value());
  CHECK(tag->keys == std::vector<std::string>{"CDNA3-WP", "SHARK"});
  CHECK(tag->detail == "40 physical, 2 fused off");
  CHECK(tag->text == "CDNA3-WP, SHARK (40 physical, 2 fused off)");
  CHECK_FALSE(source_tag_of_line("xcds = 8  # eight of them").has_value());
  CHECK_FALSE(source_tag_of_line("name = \"a # src: X\"").has_value());  // '#' inside a string
  const auto quoted = source_tag_of_line("name = \"a#b\"  # src: SHARK");
  REQUIRE(quoted.has_value());
  CHECK(quoted->keys == std::vector<std::string>{"SHARK"});
}

TEST_CASE("the registry reads backticked keys from markdown table rows") {
  CHECK(registry().size() == 4);
  CHECK(registry().contains("CDNA3-WP"));
  CHECK(*registry().citation("SHARK") == "guide");
  CHECK_FALSE(registry().contains("key"));
  CHECK(SourceRegistry::needs_detail("estimate"));
  CHECK_FALSE(SourceRegistry::needs_detail("CDNA3-WP"));
}

TEST_CASE("check_provenance finds each kind of unsourced value") {
  const std::string text =
      "# a comment line\n"                                // 1 skipped
      "[chip]\n"                                          // 2 skipped
      "xcds = 8  # src: CDNA3-WP\n"                       // 3 ok
      "cus = 38\n"                                        // 4 no comment
      "ways = 16  # src: WIKI\n"                          // 5 unknown key
      "lat = \"90cyc\"  # src: estimate\n"                // 6 estimate without a reason
      "clk = \"2GHz\"  # src: estimate (as the MI300X)\n"  // 7 ok
      "list = [\n"                                        // 8 opener skipped
      "  { a = 1 },  # src: SHARK\n"                      // 9 ok
      "  { a = 2 },\n"                                    // 10 element without a source
      "]\n"                                               // 11 skipped
      "x = 1  # src:\n";                                  // 12 names no key
  const auto problems = check_provenance(text, registry());
  REQUIRE(problems.size() == 5);
  CHECK(problems[0].line == 4);
  CHECK(problems[0].message == "value without a '# src: KEY' comment: cus = 38");
  CHECK(problems[1].line == 5);
  CHECK(problems[1].message == "unknown source key 'WIKI' (not listed in docs/sources.md)");
  CHECK(problems[2].line == 6);
  CHECK(problems[2].message ==
        "source 'estimate' needs its reason in parentheses, e.g. '# src: estimate (how it was obtained)'");
  CHECK(problems[3].line == 10);
  CHECK(problems[4].line == 12);
  CHECK(problems[4].message == "'# src:' names no source key");
}
