#include "document_skips.h"

#include <algorithm>
#include <sstream>

#include "diagnostics.h"
#include "explain.h"
#include "targets/target.h"

namespace kgen {

std::vector<IdRange> block_ranges(const int32_t* ids, int64_t length, int64_t block) {
  std::vector<IdRange> ranges;
  for (int64_t first = 0; first < length; first += block) {
    const auto [least, most] = std::minmax_element(ids + first, ids + std::min(length, first + block));
    ranges.push_back(IdRange{*least, *most});
  }
  return ranges;
}

std::vector<int32_t> packed_document_ids(const std::vector<int64_t>& lengths, int64_t length) {
  std::vector<int32_t> ids;
  ids.reserve(static_cast<std::size_t>(length));
  for (int32_t document = 0; static_cast<int64_t>(ids.size()) < length; ++document) {
    const int64_t document_length = lengths[static_cast<std::size_t>(document) % lengths.size()];
    const int64_t take = std::min(document_length, length - static_cast<int64_t>(ids.size()));
    ids.insert(ids.end(), static_cast<std::size_t>(take), document);
  }
  return ids;
}

DocumentStepCounts count_document_steps(const HeadMasks& masks, int64_t heads, const TileShape& tiles,
                                        const std::vector<int32_t>& q_ids, const std::vector<int32_t>& kv_ids,
                                        PartialTilesInOneDocument partial) {
  const std::vector<IdRange> q = block_ranges(q_ids.data(), tiles.q_len, tiles.block_q);
  const std::vector<IdRange> kv = block_ranges(kv_ids.data(), tiles.kv_len, tiles.block_kv);
  // One classification per distinct mask, counted once for each head that uses it.
  std::vector<DocumentStepCounts> per_mask(masks.unique.size());
  for (std::size_t u = 0; u < masks.unique.size(); ++u) {
    const Table3<int8_t> classes = classify_tiles(masks.unique[u], tiles);
    DocumentStepCounts& counts = per_mask[u];
    for (int64_t qb = 0; qb < classes.q_blocks; ++qb)
      for (int64_t kb = 0; kb < classes.cols; ++kb) {
        const int8_t tile = classes.at(0, qb, kb);
        if (tile == kEmptyTile) continue;
        ++counts.planned;
        const DocumentStep step = document_step(q[static_cast<std::size_t>(qb)], kv[static_cast<std::size_t>(kb)]);
        counts.dead += step == DocumentStep::kDead;
        counts.one_document += step == DocumentStep::kOneDocument &&
                               !(tile == kPartialTile && partial == PartialTilesInOneDocument::kCompare);
      }
  }
  DocumentStepCounts total;
  for (int64_t h = 0; h < heads; ++h) {
    const std::size_t mask = static_cast<std::size_t>(masks.head_to_unique[static_cast<std::size_t>(h)]);
    const DocumentStepCounts& counts = per_mask[mask];
    total.planned += counts.planned;
    total.dead += counts.dead;
    total.one_document += counts.one_document;
  }
  return total;
}

std::vector<int64_t> parse_document_lengths(const std::string& text) {
  std::vector<int64_t> lengths;
  std::istringstream in(text);
  std::string item;
  const auto bad = [&] {
    return SpecError("--document-lengths", "'" + text + "'",
                     "positive document lengths separated by commas, e.g. 1024,512,2048");
  };
  while (std::getline(in, item, ',')) {
    const bool digits = std::all_of(item.begin(), item.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (item.empty() || item.size() > 12 || !digits) throw bad();
    const int64_t length = std::stoll(item);
    if (length <= 0) throw bad();
    lengths.push_back(length);
  }
  if (lengths.empty() || text.back() == ',') throw bad();
  return lengths;
}

std::string explain_document_lengths(const Spec& spec, const std::vector<int64_t>& lengths) {
  if (!spec.segment_ids || spec.decode)
    throw SpecError("--document-lengths", "a spec without segment ids",
                    "a forward spec with \"segment_ids\": true (only its kernels skip tiles across documents)");
  const Shape& s = spec.shape;
  const std::vector<int32_t> kv_ids = packed_document_ids(lengths, s.kv_len);
  const std::vector<int32_t> q_ids = packed_document_ids(lengths, s.q_len);
  std::ostringstream out;
  std::string written;
  for (int64_t length : lengths) written += (written.empty() ? "" : ", ") + std::to_string(length);
  out << "\n  documents of lengths " << written << " packed in order on the q and the kv side, repeated to fill "
      << s.kv_len << " positions (" << (kv_ids.back() + 1) << " documents); per batch element, over all "
      << s.q_heads << " heads:\n";
  for (const Target* target : targets()) {
    if (!target->named_by(spec)) continue;
    const Tiling tiling = target->tiling(spec);
    const TileShape tiles{s.q_len, s.kv_len, tiling.block_q, tiling.block_kv};
    // The CUDA forwards compare ids on every partial tile (docs/block-plan.md).
    const bool cuda = *target->cuda_arch() != '\0';
    const DocumentStepCounts counts =
        count_document_steps(spec.masks, s.q_heads, tiles, q_ids, kv_ids,
                             cuda ? PartialTilesInOneDocument::kCompare : PartialTilesInOneDocument::kSkipTheComparison);
    const auto share = [&](int64_t part) {
      return counts.planned == 0 ? std::string("0.0%") : fraction_skipped(counts.planned - part, counts.planned);
    };
    out << "    " << target->name() << " (block_q " << tiling.block_q << ", block_kv " << tiling.block_kv
        << "): " << counts.planned << " steps in the static plan; " << counts.dead << " dead (" << share(counts.dead)
        << "), " << counts.one_document << " inside one document, without the id comparison ("
        << share(counts.one_document) << "), " << counts.compared() << " compare ids (" << share(counts.compared())
        << ")\n";
  }
  return out.str();
}

}  // namespace kgen
