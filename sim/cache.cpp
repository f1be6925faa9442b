#include "sim/cache.h"

#include <algorithm>
#include <stdexcept>
#include <type_traits>

namespace attnsim::sim {

SetAssocCache::SetAssocCache(std::uint64_t size_bytes, std::uint32_t ways, std::uint32_t line_bytes, WritePolicy policy,
                             std::uint32_t granule_lines, SetIndex index, std::uint32_t displacement_lines,
                             std::uint64_t address_limit, std::uint64_t index_prime)
    : ways_(ways), line_bytes_(line_bytes), granule_lines_(granule_lines), policy_(policy) {
  if (ways == 0 || line_bytes == 0 || (line_bytes & (line_bytes - 1)) != 0 || size_bytes % (std::uint64_t{ways} * line_bytes) != 0 ||
      size_bytes == 0) {
    throw std::invalid_argument("cache geometry: size must be a positive multiple of ways x line, line a power of two");
  }
  if (ways > 0x7FFFu) throw std::invalid_argument("cache geometry: at most 32767 ways");  // ranks fit a 16-bit word
  sets_ = size_bytes / (std::uint64_t{ways} * line_bytes);
  if (granule_lines == 0 || (granule_lines & (granule_lines - 1)) != 0 || sets_ % granule_lines != 0) {
    throw std::invalid_argument("cache granule: a power of two of lines that divides the sets");
  }
  const std::uint32_t step = displacement_lines ? displacement_lines : granule_lines;
  if ((step & (step - 1)) != 0 || step % granule_lines != 0 || sets_ % step != 0) {
    throw std::invalid_argument("cache displacement: a power of two of lines, a multiple of the granule, dividing the sets");
  }
  const WordLayout layout = word_layout(sets_, ways, line_bytes, address_limit);
  narrow_ = layout.narrow;
  tag_limit_ = narrow_ ? kInvalidTag<std::uint16_t> : kInvalidTag<std::uint32_t>;
  sets_ /= granule_lines;
  index_map_ = SetIndexMap(sets_, index, step / granule_lines, index_prime);
  line_shift_ = 0;
  while ((1u << line_shift_) < line_bytes * granule_lines) ++line_shift_;
  ordered_ = layout.ordered;
  tag_words_ = layout.tag_words;
  set_words_ = layout.set_words;
  set_bytes_ = static_cast<std::uint32_t>(set_words_ * layout.word);
  if (narrow_) {
    narrow_state_.resize(sets_ * set_words_);
  } else {
    wide_state_.resize(sets_ * set_words_);
  }
  invalidate();
}

void SetAssocCache::split() {
  if (granule_lines_ == 1) return;
  const std::uint64_t g = granule_lines_;
  // Granule set s stands for line sets g s .. g s + g - 1, each holding the same tags and ranks.
  const auto expand = [&](auto& state) {
    std::remove_reference_t<decltype(state)> lines(sets_ * g * set_words_);
    for (std::uint64_t set = 0; set < sets_; ++set) {
      for (std::uint64_t j = 0; j < g; ++j) std::copy_n(&state[set * set_words_], set_words_, &lines[(set * g + j) * set_words_]);
    }
    state.swap(lines);
  };
  if (narrow_) {
    expand(narrow_state_);
  } else {
    expand(wide_state_);
  }
  sets_ *= g;
  // Line set = g x granule set + j: the same displacement, in line sets.
  index_map_ = SetIndexMap(sets_, index_map_.index(), index_map_.step() * static_cast<std::uint32_t>(g), index_map_.prime());
  while ((1u << line_shift_) > line_bytes_) --line_shift_;
  granule_lines_ = 1;
}

void SetAssocCache::invalidate() {
  if (narrow_) {
    invalidate_words(narrow_state_);
  } else {
    invalidate_words(wide_state_);
  }
}

template <class Word>
void SetAssocCache::invalidate_words(std::vector<Word, HugePageAllocator<Word>>& state) {
  const std::uint64_t empty = ordered_ ? lru_order::empty(ways_) : 0;  // at most 16 ways: 4 bits each
  for (std::uint64_t set = 0; set < sets_; ++set) {
    Word* tags = &state[set * set_words_];
    std::fill_n(tags, tag_words_, kInvalidTag<Word>);
    if (ordered_) {
      set_order(tags, empty);
    } else {
      std::fill_n(tags + tag_words_, ways_, Word{0});
    }
  }
}

SetAssocCache::WordLayout SetAssocCache::word_layout(std::uint64_t line_sets, std::uint32_t ways, std::uint32_t line_bytes,
                                                     std::uint64_t address_limit) {
  WordLayout w;
  // A tag is address / (line x sets), granular or not: narrow words hold every tag below the limit
  // when the largest fits 15 bits and is not the invalid tag.
  const std::uint64_t largest_tag = address_limit == 0 ? 0 : (address_limit - 1) / line_bytes / line_sets;
  w.narrow = largest_tag < kInvalidTag<std::uint16_t>;
  w.word = w.narrow ? 2 : 4;
  w.ordered = ways <= 16;
  if (w.ordered) {  // the tags padded to 8 bytes, then the recency word
    w.tag_words = (ways * w.word + 7) / 8 * 8 / w.word;
    w.set_words = w.tag_words + 8 / w.word;
  } else {
    w.tag_words = ways;
    w.set_words = 2 * std::uint64_t{ways};
  }
  return w;
}

std::uint64_t SetAssocCache::state_bytes_split(std::uint64_t size_bytes, std::uint32_t ways, std::uint32_t line_bytes,
                                               std::uint64_t address_limit) {
  const std::uint64_t line_sets = size_bytes / (std::uint64_t{ways} * line_bytes);
  const WordLayout w = word_layout(line_sets, ways, line_bytes, address_limit);
  return line_sets * w.set_words * w.word;
}

std::uint64_t SetAssocCache::state_bytes() const {
  return narrow_state_.size() * sizeof(std::uint16_t) + wide_state_.size() * sizeof(std::uint32_t);
}

bool SetAssocCache::contains(std::uint64_t address) const {
  return narrow_ ? contains_words<std::uint16_t>(address) : contains_words<std::uint32_t>(address);
}

template <class Word>
bool SetAssocCache::contains_words(std::uint64_t address) const {
  const std::uint64_t line = address >> line_shift_;
  const std::uint64_t tag = index_map_.tag_of(line);
  if (tag >= tag_limit_) return false;
  const Word* tags = set_words<Word>(set_of(line));
  for (std::uint32_t i = 0; i < ways_; ++i) {
    if (static_cast<std::uint64_t>(tags[i] & ~kDirtyBit<Word>) == tag) return true;  // never kInvalidTag: tag < tag_limit_
  }
  return false;
}

}  // namespace attnsim::sim
