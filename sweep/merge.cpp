#include "sweep/merge.h"

#include <set>

#include "arch/config_error.h"
#include "sweep/result_store.h"

namespace attnsim::sweep {

MergeSummary merge_sweeps(const std::vector<std::filesystem::path>& dirs, const std::filesystem::path& out) {
  if (dirs.empty()) throw arch::ConfigError(arch::ValueOrigin{"sweep merge", 0, 0, {}}, "DIR", "no directories given");
  std::vector<ResultStore> stores;
  std::vector<ordered_json> manifests;
  for (const auto& d : dirs) {
    require_sweep_dir(d);
    stores.emplace_back(d);
    manifests.push_back(stores.back().read_manifest());
    if (manifests.back()["points"] != manifests.front()["points"]) {
      throw arch::ConfigError(arch::ValueOrigin{d.string(), 0, 0, {}}, "DIR",
                              "holds another sweep than " + dirs.front().string() + " (its points differ)");
    }
  }
  const ResultStore target(out);
  target.write_manifest(manifests.front());
  MergeSummary s;
  std::set<std::string> ids;
  for (const auto& p : manifests.front()["points"]) ids.insert(p["id"].get<std::string>());
  s.points = manifests.front()["points"].size();
  for (const auto& id : ids) {
    bool found = false;
    for (const auto& st : stores) {
      if (auto r = st.load(id)) {
        if (!std::filesystem::equivalent(st.dir(), target.dir())) target.save(*r);
        found = true;
        break;
      }
    }
    if (!found) ++s.missing;
  }
  s.rows = target.write_results(manifests.front());
  return s;
}

}  // namespace attnsim::sweep
