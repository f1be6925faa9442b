#include "sim/memory_path.h"

namespace attnsim::sim {

namespace {
// Folds address bits so that power-of-two strides spread over channels (the hardware hashes
// addresses to channels; the exact hash is not published, so this one is an estimate).
std::uint64_t fold(std::uint64_t x) { return x ^ (x >> 7) ^ (x >> 13) ^ (x >> 19); }
}  // namespace

MemoryPath::MemoryPath(const arch::GpuSpec& gpu, double engine_hz)
    : gpu_(gpu),
      engine_(engine_hz),
      line_(static_cast<std::uint32_t>(gpu.l2.line.value)),
      l1_latency_(engine_.ticks(static_cast<double>(gpu.l1.latency.value))),
      l2_latency_(engine_.ticks(static_cast<double>(gpu.l2.latency.value))),
      mall_latency_(gpu.mall.present ? gpu.mall.latency.value : 0),
      hbm_latency_(gpu.hbm.latency.value) {
  const std::uint32_t instances = gpu.l2_instances();
  for (std::uint32_t i = 0; i < instances; ++i) {
    l2_.push_back(std::make_unique<SetAssocCache>(gpu.l2.size.value, gpu.l2.ways, line_, WritePolicy::write_back));
  }
  const double f = engine_hz;
  const std::uint32_t channels = instances * gpu.l2.channels;
  l2_read_.assign(channels, BandwidthServer(static_cast<double>(gpu.l2.read_bandwidth.value) * f));
  l2_write_.assign(channels, BandwidthServer(static_cast<double>(gpu.l2.write_bandwidth.value) * f));
  link_.assign(channels, BandwidthServer(static_cast<double>(gpu.fabric.l2_link_bandwidth.value) * f));
  if (gpu.mall.present) {
    mall_ = std::make_unique<SetAssocCache>(gpu.mall.size.value, gpu.mall.ways,
                                            static_cast<std::uint32_t>(gpu.mall.line.value), WritePolicy::write_through);
    mall_ch_.assign(gpu.mall.channels,
                    BandwidthServer(static_cast<double>(gpu.mall.bandwidth.value) * gpu.clock.fabric.value));
  }
  hbm_ch_.assign(gpu.hbm.channels, BandwidthServer(gpu.hbm.peak_bandwidth.value / gpu.hbm.channels));
}

std::uint32_t MemoryPath::l2_channel(std::uint64_t address) const {
  return static_cast<std::uint32_t>(fold(address / line_) % gpu_.l2.channels);
}
std::uint32_t MemoryPath::mall_channel(std::uint64_t address) const {
  return static_cast<std::uint32_t>(fold(address / gpu_.hbm.interleave.value) % gpu_.mall.channels);
}
std::uint32_t MemoryPath::hbm_channel(std::uint64_t address) const {
  // Consecutive interleave-sized chunks go to consecutive channels (NPS1).
  return static_cast<std::uint32_t>(fold(address / gpu_.hbm.interleave.value) % gpu_.hbm.channels);
}

Tick MemoryPath::read_line(std::uint32_t xcd, std::uint64_t address, Tick t, ServedBy* served) {
  const std::uint32_t inst = gpu_.l2_instance_of(xcd);
  const std::uint32_t ch = inst * gpu_.l2.channels + l2_channel(address);
  Tick at = l2_read_[ch].serve(t + l1_latency_, line_);
  bool hit = false;
  std::uint64_t victim = 0;
  bool dirty_victim = false;
  const ProbeResult r = l2_[inst]->access(address, line_, false, [](std::uint64_t, std::uint64_t) {},
                                          [&](std::uint64_t v) {
                                            dirty_victim = true;
                                            victim = v;
                                          });
  hit = r.hits == 1;
  // The request retires only once its dirty victim has been written back (a full write-back queue
  // holds the L2 channel): this is what throttles a stream to the slowest level.
  if (dirty_victim) at = std::max(at, write_back(xcd, victim, at));
  if (hit) {
    if (served) *served = ServedBy::l2;
    return at + l2_latency_;
  }
  at = link_[ch].serve(at, line_);
  if (mall_) {
    const std::uint32_t m = mall_channel(address);
    at = mall_ch_[m].serve(at, line_);
    const ProbeResult mr = mall_->access(address, line_, false, [](std::uint64_t, std::uint64_t) {}, [](std::uint64_t) {});
    if (mr.misses == 0) {
      if (served) *served = ServedBy::mall;
      return at + l2_latency_ + mall_latency_;
    }
  }
  at = hbm_ch_[hbm_channel(address)].serve(at, line_);
  if (served) *served = ServedBy::hbm;
  return at + l2_latency_ + mall_latency_ + hbm_latency_;
}

Tick MemoryPath::write_line(std::uint32_t xcd, std::uint64_t address, Tick t) {
  const std::uint32_t inst = gpu_.l2_instance_of(xcd);
  const std::uint32_t ch = inst * gpu_.l2.channels + l2_channel(address);
  const Tick accepted = l2_write_[ch].serve(t + l1_latency_, line_);
  Tick done = accepted;
  l2_[inst]->access(address, line_, true, [](std::uint64_t, std::uint64_t) {},
                    [&](std::uint64_t v) { done = std::max(done, write_back(xcd, v, accepted)); });
  return done;
}

Tick MemoryPath::write_back(std::uint32_t xcd, std::uint64_t line_address, Tick t) {
  const std::uint32_t inst = gpu_.l2_instance_of(xcd);
  const std::uint32_t ch = inst * gpu_.l2.channels + l2_channel(line_address);
  Tick at = link_[ch].serve(t, line_);
  if (mall_) at = mall_ch_[mall_channel(line_address)].serve(at, line_);
  return hbm_ch_[hbm_channel(line_address)].serve(at, line_);
}

Tick MemoryPath::flush(Tick t) {
  Tick done = t;
  for (std::uint32_t inst = 0; inst < l2_.size(); ++inst) {
    l2_[inst]->flush([&](std::uint64_t line) { done = std::max(done, write_back(inst, line, t)); });
  }
  return done;
}

Tick MemoryPath::hbm_busy() const {
  Tick b = 0;
  for (const auto& s : hbm_ch_) b += s.busy();
  return b;
}

}  // namespace attnsim::sim
