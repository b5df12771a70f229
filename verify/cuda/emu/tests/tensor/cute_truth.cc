#include "cute_truth.h"

#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace kgen::emu::test {
namespace {

template <class T>
std::vector<T> read_values(std::istream& in, size_t count) {
  std::vector<T> values(count);
  for (T& value : values) in >> value;
  return values;
}

CuteTruth parse(std::istream& file) {
  CuteTruth truth;
  GmmaTruth* operand = nullptr;  // the record "block" lines belong to
  std::string line;
  while (std::getline(file, line)) {
    std::istringstream in(line);
    std::string kind;
    in >> kind;
    if (kind == "swizzle") {
      SwizzleTruth s;
      in >> s.swizzle.bits >> s.swizzle.base >> s.swizzle.shift;
      s.image = read_values<uint32_t>(in, 1024);
      truth.swizzles.push_back(std::move(s));
    } else if (kind == "gmma" || kind == "umma") {
      GmmaTruth g;
      std::string major;
      in >> g.element_bytes >> major >> g.layout >> g.mn_tile >> g.k_tile >> g.mn_extent >> g.k_extent;
      g.major = major == "K" ? Major::kK : Major::kMN;
      auto& list = kind == "gmma" ? truth.gmma : truth.umma;
      list.push_back(std::move(g));
      operand = &list.back();
    } else if (kind == "block") {
      if (operand == nullptr) throw std::runtime_error("cute truth: a block before its operand");
      GmmaTruth& g = *operand;
      GmmaBlock b;
      in >> b.mn_block >> b.k_block >> std::hex >> b.descriptor >> std::dec;
      b.addresses = read_values<uint32_t>(in, size_t(g.mn_extent) * g.k_extent);
      g.blocks.push_back(std::move(b));
    } else if (kind == "clayout" || kind == "alayout") {
      FragmentTruth f;
      in >> f.parameter >> f.values;
      f.index = read_values<int>(in, size_t(128) * f.values);
      (kind == "clayout" ? truth.accumulators : truth.a_registers)[f.parameter] = std::move(f);
    } else if (kind == "ldsm" || kind == "stsm") {
      MatrixCopyTruth m;
      int trans = 0;
      m.store = kind == "stsm";
      in >> m.matrices >> trans;
      m.trans = trans != 0;
      m.row_of_lane = read_values<int>(in, 32);
      m.element = read_values<int>(in, size_t(32) * m.matrices * 2);
      truth.matrix_copies.push_back(std::move(m));
    } else if (kind == "idesc") {
      InstrDescriptorTruth d;
      int a_mn = 0, b_mn = 0, a_neg = 0;
      in >> d.a >> d.b >> d.c >> d.m >> d.n >> a_mn >> b_mn >> a_neg >> d.value;
      d.a_mn_major = a_mn != 0;
      d.b_mn_major = b_mn != 0;
      d.a_negate = a_neg != 0;
      truth.instr_descriptors.push_back(std::move(d));
    } else if (kind == "tma") {
      TmaTruth t;
      int mn_major = 0, tile = 0, data_type = 0, rank = 0, interleave = 0, swizzle = 0;
      in >> t.name >> t.element_bytes >> mn_major >> t.rows >> t.cols >> tile >> t.base >> data_type >> rank >>
          interleave >> swizzle >> t.map.global_address;
      t.mn_major = mn_major != 0;
      t.mn_tile = tile / 1000;
      t.k_tile = tile % 1000;
      t.map.magic = TensorMap::kMagic;
      t.map.data_type = uint8_t(data_type);
      t.map.rank = uint8_t(rank);
      t.map.interleave = uint8_t(interleave);
      t.map.swizzle = uint8_t(swizzle);
      t.map.element_bytes = uint8_t(t.element_bytes);
      for (int d = 0; d < rank; ++d) {
        uint32_t element_stride = 0;
        in >> t.map.global_dim[d] >> t.map.global_stride[d] >> t.map.box_dim[d] >> element_stride;
        t.map.element_strides[d] = uint8_t(element_stride);
      }
      t.map.global_stride[0] = t.element_bytes;
      t.addresses = read_values<uint32_t>(in, size_t(t.mn_tile) * t.k_tile);
      truth.tma.push_back(std::move(t));
    } else if (kind == "tmem") {
      TmemCopyTruth t;
      in >> t.shape >> t.num >> t.split >> t.registers;
      for (int k = 0; k < 32 * t.registers; ++k) {
        TmemCell c;
        in >> c.lane >> c.column;
        t.cells.push_back(c);
      }
      truth.tmem.push_back(std::move(t));
    } else if (!kind.empty()) {
      throw std::runtime_error("cute truth: unknown record " + kind);
    }
    if (in.fail()) throw std::runtime_error("cute truth: short record " + kind);
  }
  return truth;
}

uint64_t value_bytes(const std::vector<uint8_t>& memory, size_t at, int bytes) {
  uint64_t value = 0;
  std::memcpy(&value, memory.data() + at, bytes);
  return value;
}
void put_value(std::vector<uint8_t>& memory, size_t at, int bytes, uint64_t value) { std::memcpy(memory.data() + at, &value, bytes); }

// The tile in the map's dimensions (0 innermost) and how CuTe's tile_to_shape orders its boxes.
struct TileBoxes {
  int extent[2] = {}, boxes[2] = {};
  int mn_dim = 0;  // the map dimension that is MN
  int box_order(int b0, int b1) const { return mn_dim == 0 ? b0 + boxes[0] * b1 : b1 + boxes[1] * b0; }
};
TileBoxes tile_boxes(const TmaTruth& t) {
  TileBoxes tb;
  tb.mn_dim = t.mn_major ? 0 : 1;
  tb.extent[tb.mn_dim] = t.mn_tile;
  tb.extent[1 - tb.mn_dim] = t.k_tile;
  for (int d = 0; d < 2; ++d) tb.boxes[d] = tb.extent[d] / int(t.map.box_dim[d]);
  return tb;
}
// The tile element (mn, k) in map dimensions.
void map_coordinates(const TmaTruth& t, int mn, int k, int64_t* d0, int64_t* d1) {
  *d0 = t.mn_major ? mn : k;
  *d1 = t.mn_major ? k : mn;
}

// A refused load or store moved nothing: every element of the tile counts as wrong.
int refused(const TmaTruth& truth, const std::string& error) {
  std::fprintf(stderr, "%s: refused: %s\n", truth.name.c_str(), error.c_str());
  return truth.mn_tile * truth.k_tile;
}

}  // namespace

std::string GmmaTruth::name() const {
  return std::to_string(element_bytes) + "-byte " + (major == Major::kK ? "K" : "MN") + "-major layout " +
         std::to_string(layout);
}

const CuteTruth* cute_truth(std::string* why) {
#ifdef KGEN_EMU_CUTE_TRUTH
  (void)why;
  static const CuteTruth truth = [] {
    std::ifstream file(KGEN_EMU_CUTE_TRUTH);
    if (!file) throw std::runtime_error("cannot read " KGEN_EMU_CUTE_TRUTH);
    return parse(file);
  }();
  return &truth;
#else
  *why = "this build found no nvcc or CuTe headers to compute the CuTe truth with";
  return nullptr;
#endif
}

int count_swizzle_mismatches(const SwizzleTruth& truth, const SwizzleFn& fn) {
  int mismatches = 0;
  for (size_t i = 0; i < truth.image.size(); ++i) mismatches += fn(truth.swizzle, uint32_t(4 * i)) != truth.image[i];
  return mismatches;
}

int count_tmem_copy_mismatches(const TmemCopyTruth& truth, const TmemCellFn& fn) {
  int wrong = 0;
  for (int t = 0; t < 32; ++t)
    for (int r = 0; r < truth.registers; ++r)
      wrong += !(fn(truth.shape, t, r, uint32_t(truth.split)) == truth.cells[size_t(t) * truth.registers + r]);
  return wrong;
}

int count_gmma_mismatches(const GmmaTruth& truth, const OperandAddressFn& fn) {
  int mismatches = 0;
  for (const GmmaBlock& block : truth.blocks)
    for (int mn = 0; mn < truth.mn_extent; ++mn)
      for (int k = 0; k < truth.k_extent; ++k)
        mismatches += fn(block.descriptor, truth.major, mn, k, truth.element_bytes) !=
                      block.addresses[size_t(mn) * truth.k_extent + k];
  return mismatches;
}

int count_fragment_mismatches(const FragmentTruth& truth, const FragmentFn& fn) {
  int mismatches = 0;
  for (int t = 0; t < 128; ++t)
    for (int v = 0; v < truth.values; ++v) {
      const int index = truth.index[size_t(t) * truth.values + v];
      mismatches += !(fn(t, v) == FragmentCoord{index % 64, index / 64});
    }
  return mismatches;
}

int count_matrix_copy_mismatches(const MatrixCopyTruth& truth, const AddressLaneFn& lane_of, const MatrixElementFn& element) {
  int mismatches = 0;
  // Only lanes 0 .. 8 * matrices - 1 supply addresses; CuTe repeats them for the others.
  for (int matrix = 0; matrix < truth.matrices; ++matrix)
    for (int row = 0; row < 8; ++row) {
      const int lane = lane_of(matrix, row);
      mismatches += lane < 0 || lane >= 8 * truth.matrices || truth.row_of_lane[lane] != (8 * matrix + row) * 8;
    }
  for (int lane = 0; lane < 32; ++lane)
    for (int reg = 0; reg < truth.matrices; ++reg)
      for (int part = 0; part < 2; ++part) {
        const int index = truth.element[(size_t(lane) * truth.matrices + reg) * 2 + part];
        const LdmatrixElement want{index / 64, index % 64 / 8, index % 8};
        mismatches += !(element(lane, reg, part, truth.trans) == want);
      }
  return mismatches;
}

int count_tma_load_mismatches(const TmaTruth& truth, int32_t shift0, int32_t shift1, bool nan_fill, const TmaLoadFn& load) {
  TensorMap map = truth.map;
  map.oob_fill = nan_fill ? 1 : 0;
  const int e = truth.element_bytes;
  const uint64_t dim0 = map.global_dim[0], dim1 = map.global_dim[1];
  std::vector<uint8_t> global(map.global_stride[1] * dim1 + map.global_address);
  for (uint64_t g1 = 0; g1 < dim1; ++g1)
    for (uint64_t g0 = 0; g0 < dim0; ++g0)
      put_value(global, map.global_address + g1 * map.global_stride[1] + g0 * e, e, g1 * dim0 + g0 + 1);
  map.global_address += reinterpret_cast<uint64_t>(global.data());
  const GlobalRead read = [&](uint64_t address, std::span<uint8_t> out) {
    const uint64_t begin = reinterpret_cast<uint64_t>(global.data());
    if (address < begin || address + out.size() > begin + global.size()) throw std::out_of_range("read outside the tensor");
    std::memcpy(out.data(), global.data() + (address - begin), out.size());
  };
  std::vector<uint8_t> shared(1 << 16, 0xab);
  const TileBoxes tb = tile_boxes(truth);
  for (int b1 = 0; b1 < tb.boxes[1]; ++b1)
    for (int b0 = 0; b0 < tb.boxes[0]; ++b0) {
      const int32_t coordinates[2] = {int32_t(b0 * map.box_dim[0]) + shift0, int32_t(b1 * map.box_dim[1]) + shift1};
      const uint32_t destination = truth.base + uint32_t(tb.box_order(b0, b1)) * box_bytes(map);
      if (const std::string error = load(map, coordinates, shared, destination, read); !error.empty())
        return refused(truth, error);
    }
  const uint64_t nan = e == 2 ? 0x7fff : 0x7fffffff;
  int mismatches = 0;
  for (int mn = 0; mn < truth.mn_tile; ++mn)
    for (int k = 0; k < truth.k_tile; ++k) {
      int64_t d0 = 0, d1 = 0;
      map_coordinates(truth, mn, k, &d0, &d1);
      const int64_t g0 = d0 + shift0, g1 = d1 + shift1;
      const bool in_bounds = g0 >= 0 && g0 < int64_t(dim0) && g1 >= 0 && g1 < int64_t(dim1);
      const uint64_t want = in_bounds ? uint64_t(g1) * dim0 + uint64_t(g0) + 1 : (nan_fill ? nan : 0);
      mismatches += value_bytes(shared, truth.addresses[size_t(mn) * truth.k_tile + k], e) != want;
    }
  return mismatches;
}

int count_tma_address_mismatches(const TmaTruth& truth) {
  const TileBoxes tb = tile_boxes(truth);
  int mismatches = 0;
  for (int mn = 0; mn < truth.mn_tile; ++mn)
    for (int k = 0; k < truth.k_tile; ++k) {
      int64_t d0 = 0, d1 = 0;
      map_coordinates(truth, mn, k, &d0, &d1);
      const uint32_t box0 = truth.map.box_dim[0], box1 = truth.map.box_dim[1];
      const uint32_t index[2] = {uint32_t(d0) % box0, uint32_t(d1) % box1};
      const uint32_t destination =
          truth.base + uint32_t(tb.box_order(int(d0 / box0), int(d1 / box1))) * box_bytes(truth.map);
      mismatches += tma_box_element_address(truth.map, index, destination) != truth.addresses[size_t(mn) * truth.k_tile + k];
    }
  return mismatches;
}

int count_tma_store_mismatches(const TmaTruth& truth, int32_t shift0, int32_t shift1, const TmaStoreFn& store) {
  TensorMap map = truth.map;
  const int e = truth.element_bytes;
  const uint64_t dim0 = map.global_dim[0], dim1 = map.global_dim[1];
  const uint64_t sentinel = 0xcdcdcdcdu;
  std::vector<uint8_t> global(map.global_stride[1] * dim1 + map.global_address, 0xcd);
  map.global_address += reinterpret_cast<uint64_t>(global.data());
  const GlobalWrite write = [&](uint64_t address, std::span<const uint8_t> bytes) {
    const uint64_t begin = reinterpret_cast<uint64_t>(global.data());
    if (address < begin || address + bytes.size() > begin + global.size()) throw std::out_of_range("write outside the tensor");
    std::memcpy(global.data() + (address - begin), bytes.data(), bytes.size());
  };
  const TileBoxes tb = tile_boxes(truth);
  std::vector<uint8_t> shared(1 << 16, 0xab);
  for (int mn = 0; mn < truth.mn_tile; ++mn)
    for (int k = 0; k < truth.k_tile; ++k) {
      int64_t d0 = 0, d1 = 0;
      map_coordinates(truth, mn, k, &d0, &d1);
      put_value(shared, truth.addresses[size_t(mn) * truth.k_tile + k], e, uint64_t(d1 * tb.extent[0] + d0 + 1));
    }
  for (int b1 = 0; b1 < tb.boxes[1]; ++b1)
    for (int b0 = 0; b0 < tb.boxes[0]; ++b0) {
      const int32_t coordinates[2] = {int32_t(b0 * map.box_dim[0]) + shift0, int32_t(b1 * map.box_dim[1]) + shift1};
      const uint32_t source = truth.base + uint32_t(tb.box_order(b0, b1)) * box_bytes(map);
      if (const std::string error = store(map, coordinates, shared, source, write); !error.empty())
        return refused(truth, error);
    }
  int mismatches = 0;
  const uint64_t mask = e == 8 ? ~uint64_t{0} : (uint64_t{1} << (8 * e)) - 1;
  for (uint64_t g1 = 0; g1 < dim1; ++g1)
    for (uint64_t g0 = 0; g0 < dim0; ++g0) {
      const int64_t d0 = int64_t(g0) - shift0, d1 = int64_t(g1) - shift1;
      const bool in_tile = d0 >= 0 && d0 < tb.extent[0] && d1 >= 0 && d1 < tb.extent[1];
      const uint64_t want = in_tile ? uint64_t(d1 * tb.extent[0] + d0 + 1) : (sentinel & mask);
      mismatches += value_bytes(global, truth.map.global_address + g1 * map.global_stride[1] + g0 * e, e) != want;
    }
  return mismatches;
}

}  // namespace kgen::emu::test
