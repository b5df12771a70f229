// What one CTA of the sm90a decode kernel computes: grid (split x q tile, kv head, batch). Its
// q tile is 64 rows of the (batch, kv head)'s group x q_len rows, and its kv blocks are its
// split's share of the sequence's live blocks (decode/cuda/walk.cuh).
#pragma once

#include <cute/config.hpp>

#include "decode/cuda/walk.cuh"

namespace kgen {
namespace sm90a {

struct DecodeWork {
  int batch;
  int kv_head;
  int split;
  int row_origin;  // the CTA's first row of the q tile
  cuda::DecodeBlocks blocks;

  CUTE_DEVICE int tile_count() const { return blocks.end - blocks.begin; }
};

template <class Config, class Params>
CUTE_DEVICE DecodeWork decode_work(Params const& params) {
  DecodeWork work;
  work.batch = int(blockIdx.z);
  work.kv_head = int(blockIdx.y);
  work.split = int(blockIdx.x) / Config::kQTiles;
  work.row_origin = (int(blockIdx.x) % Config::kQTiles) * 64;
  work.blocks = cuda::decode_blocks<Config>(__ldg(params.kv_lens + work.batch), work.split);
  return work;
}

}  // namespace sm90a
}  // namespace kgen
