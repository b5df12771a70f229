// The process's emulated GPU: allocations, loaded modules (with their global and shared
// variables laid out) and launches, which run the grid's CTAs one after another in an order
// the seed shuffles.
#include "core/device.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <mutex>
#include <random>
#include <sstream>
#include <unordered_map>

#include "core/machine.h"
#include "ptx/module.h"

namespace kgen::emu {
namespace {

struct LoadedModule {
  ptx::Module module;
  std::vector<std::unique_ptr<uint8_t[]>> storage;  // global/const variables
  std::vector<uint64_t> variable_address;
  uint32_t shared_end = 0;    // one past the module's static shared variables
  uint32_t extern_align = 16;  // of the .extern shared array
};

struct KernelEntry {
  LoadedModule* module = nullptr;
  const ptx::Function* function = nullptr;
  KernelInfo info;
  std::unique_ptr<Program> program;  // built at first launch
};

// KGEN_EMU_CTAS: "[KERNEL:]x=A-B[,y=A-B][,z=A-B];..." (see device.h).
std::vector<CtaFilter> parse_ctas(const std::string& text) {
  std::vector<CtaFilter> filters;
  std::stringstream list(text);
  std::string item;
  while (std::getline(list, item, ';')) {
    if (item.empty()) continue;
    CtaFilter f;
    const size_t colon = item.find(':');
    if (colon != std::string::npos) {
      f.kernel = item.substr(0, colon);
      item = item.substr(colon + 1);
    }
    std::stringstream ranges(item);
    std::string range;
    while (std::getline(ranges, range, ',')) {
      char axis = 0;
      uint32_t lo = 0, hi = 0;
      if (std::sscanf(range.c_str(), "%c=%u-%u", &axis, &lo, &hi) != 3 || lo > hi || (axis != 'x' && axis != 'y' && axis != 'z'))
        throw EmulationError("KGEN_EMU_CTAS: cannot read '" + range + "' (expected x=A-B, y=A-B or z=A-B)");
      (axis == 'x' ? f.x : axis == 'y' ? f.y : f.z) = {lo, hi};
    }
    filters.push_back(f);
  }
  return filters;
}

class EmulatedDevice final : public Device {
 public:
  EmulatedDevice() {
    if (const char* s = std::getenv("KGEN_EMU_SEED")) options_.seed = std::strtoull(s, nullptr, 10);
    if (const char* s = std::getenv("KGEN_EMU_CTAS")) options_.ctas = parse_ctas(s);
    if (const char* s = std::getenv("KGEN_EMU_STATS")) options_.stats_path = s;
    if (const char* s = std::getenv("KGEN_EMU_PTX")) options_.replacement_ptx = s;
    if (const char* s = std::getenv("KGEN_EMU_DUMP_PTX")) options_.dump_folder = s;
    if (const char* s = std::getenv("KGEN_EMU_MAX_INSTRUCTIONS")) options_.max_instructions = std::strtoull(s, nullptr, 10);
  }

  Options& options() override { return options_; }

  void* allocate(size_t bytes) override {
    const size_t rounded = (std::max<size_t>(bytes, 1) + 255) / 256 * 256;
    void* p = std::aligned_alloc(256, rounded);
    if (!p) return nullptr;
    std::memset(p, 0xff, rounded);
    globals_.add(p, bytes, "allocation of " + std::to_string(bytes) + " bytes");
    return p;
  }

  void release(void* pointer) override {
    if (!globals_.remove(pointer)) throw EmulationError("cudaFree of a pointer cudaMalloc did not return");
    std::free(pointer);
  }

  bool contains(const void* pointer, size_t bytes) const override {
    return globals_.find(reinterpret_cast<uint64_t>(pointer), bytes) != nullptr;
  }

  void load_ptx(std::string ptx, std::string origin) override {
    std::lock_guard lock(mutex_);
    auto m = std::make_unique<LoadedModule>();
    m->module = ptx::parse_module(ptx, origin);
    if (!options_.dump_folder.empty()) dump(m->module, ptx);
    if (!options_.replacement_ptx.empty()) replace(*m);
    lay_out_variables(*m);
    for (const ptx::Function& f : m->module.functions) {
      if (!f.is_entry || f.body.empty()) continue;
      KernelEntry& e = kernels_[f.name];
      e.module = m.get();
      e.function = &f;
      e.program.reset();
      e.info.name = f.name;
      for (const ptx::Param& p : f.params) {
        e.info.param_sizes.push_back(p.size);
        e.info.param_aligns.push_back(p.align);
      }
      e.info.max_threads = Dim3{f.max_threads[0], f.max_threads[1], f.max_threads[2]};
      uint32_t shared = m->shared_end;
      for (const ptx::Variable& v : f.locals)
        if (v.space == ptx::Space::shared) shared = (shared + v.align - 1) / v.align * v.align + static_cast<uint32_t>(v.size);
      e.info.static_shared_bytes = shared - kSharedBase;
      e.info.target = m->module.target;
      e.info.required_cluster = Dim3{f.cluster_dims[0], f.cluster_dims[1], f.cluster_dims[2]};
      e.info.explicit_cluster = f.explicit_cluster;
    }
    modules_.push_back(std::move(m));
  }

  const KernelInfo* kernel(std::string_view name) const override {
    std::lock_guard lock(mutex_);
    const auto it = kernels_.find(std::string(name));
    return it == kernels_.end() ? nullptr : &it->second.info;
  }

  int decode_all(std::string_view origin) override {
    std::lock_guard lock(mutex_);
    int n = 0;
    for (auto& [name, e] : kernels_) {
      if (e.module->module.origin != origin) continue;
      build(e);
      ++n;
    }
    return n;
  }

  LaunchStats launch(std::string_view name, Dim3 grid, Dim3 block, uint32_t dynamic_shared, void** args, Dim3 cluster,
                     bool explicit_cluster) override {
    const auto start = std::chrono::steady_clock::now();
    KernelEntry* e = nullptr;
    {
      std::lock_guard lock(mutex_);
      const auto it = kernels_.find(std::string(name));
      if (it == kernels_.end()) throw EmulationError("launch of kernel " + std::string(name) + ", which no loaded PTX defines");
      e = &it->second;
      build(*e);
    }
    Launch l;
    l.program = e->program.get();
    l.info = &e->info;
    l.grid = grid;
    l.block = block;
    l.dynamic_shared = dynamic_shared;
    l.globals = &globals_;
    l.seed = options_.seed;
    l.max_instructions = options_.max_instructions;
    l.sm_count = e->info.target.rfind("sm_100", 0) == 0 ? 148 : 132;
    l.params.assign(l.program->param_bytes, 0);
    for (size_t k = 0; k < e->function->params.size(); ++k)
      std::memcpy(l.params.data() + l.program->param_offset[k], args[k], e->function->params[k].size);
    if (block.count() == 0 || block.count() > 1024) throw EmulationError("launch with " + std::to_string(block.count()) + " threads per block");
    l.cluster = cluster_shape(e->info, grid, cluster);
    l.explicit_cluster = explicit_cluster || e->info.required_cluster.count() > 0 || e->info.explicit_cluster;

    // The CTAs to run (a KGEN_EMU_CTAS filter naming this kernel, else all), in an order the
    // seed shuffles: a kernel whose CTAs depend on each other's order shows it.
    const CtaFilter* filter = nullptr;
    for (const CtaFilter& f : options_.ctas)
      if (name.find(f.kernel) != std::string_view::npos) {
        filter = &f;
        break;
      }
    std::vector<Dim3> ctas;
    for (uint32_t z = 0; z < grid.z; ++z)
      for (uint32_t y = 0; y < grid.y; ++y)
        for (uint32_t x = 0; x < grid.x; ++x)
          if (!filter || filter->contains(Dim3{x, y, z})) ctas.push_back(Dim3{x, y, z});
    std::mt19937_64 order(options_.seed * 0x9e3779b97f4a7c15ull + 7);
    std::shuffle(ctas.begin(), ctas.end(), order);
    // A CTA runs with its whole cluster: the clusters of the chosen CTAs, each once, in the
    // shuffled order of their first chosen CTA.
    std::vector<Dim3> clusters;
    for (const Dim3& c : ctas) {
      const Dim3 id{c.x / l.cluster.x, c.y / l.cluster.y, c.z / l.cluster.z};
      if (std::none_of(clusters.begin(), clusters.end(),
                       [&](const Dim3& k) { return k.x == id.x && k.y == id.y && k.z == id.z; }))
        clusters.push_back(id);
    }
    LaunchStats stats;
    stats.ctas_in_grid = grid.count();
    l.unlaunched.assign(clusters.begin(), clusters.end());
    while (!l.unlaunched.empty()) {
      const Dim3 c = l.unlaunched.front();
      l.unlaunched.pop_front();
      run_cluster(l, c, stats);
      stats.ctas_run += l.cluster.count();
    }
    stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    record(name, stats);
    return stats;
  }

 private:
  // The cluster shape a launch runs with: the launch's, else the kernel's .reqnctapercluster;
  // both must agree when both are given, and tile the grid.
  static Dim3 cluster_shape(const KernelInfo& info, Dim3 grid, Dim3 requested) {
    auto text = [](Dim3 d) {
      return "(" + std::to_string(d.x) + "," + std::to_string(d.y) + "," + std::to_string(d.z) + ")";
    };
    const Dim3 declared = info.required_cluster;
    Dim3 shape = requested;
    if (declared.count() > 0) {
      if (requested.count() > 1 && (requested.x != declared.x || requested.y != declared.y || requested.z != declared.z))
        throw EmulationError("launch of " + info.name + " with cluster " + text(requested) +
                             ", but the kernel declares .reqnctapercluster " + text(declared));
      shape = declared;
    }
    if (shape.count() == 0 || shape.count() > 16)
      throw EmulationError("launch of " + info.name + " with cluster " + text(shape) + ": a cluster has 1 to 16 CTAs");
    if (grid.x % shape.x || grid.y % shape.y || grid.z % shape.z)
      throw EmulationError("launch of " + info.name + ": grid " + text(grid) + " is not a multiple of the cluster " +
                           text(shape));
    return shape;
  }

  void dump(const ptx::Module& module, const std::string& ptx) const {
    for (const ptx::Function& f : module.functions)
      if (f.is_entry && !f.body.empty()) {
        // CUTLASS's mangled names run past the 255 bytes a file name may have: those are cut
        // to 200 and made unique by a hash of the whole name.
        std::string file = f.name;
        if (file.size() > 200) {
          std::ostringstream hash;
          hash << std::hex << std::hash<std::string>{}(f.name);
          file = file.substr(0, 200) + "-" + hash.str();
        }
        const std::string path = options_.dump_folder + "/" + file + ".ptx";
        std::ofstream out(path);
        out << ptx;
        if (!out) throw EmulationError("KGEN_EMU_DUMP_PTX: cannot write " + path);
        return;
      }
  }

  // KGEN_EMU_PTX: the replacement takes the place of a module that defines one of its kernels.
  void replace(LoadedModule& m) const {
    std::ifstream in(options_.replacement_ptx);
    if (!in) throw EmulationError("KGEN_EMU_PTX: cannot read " + options_.replacement_ptx);
    std::stringstream text;
    text << in.rdbuf();
    ptx::Module replacement = ptx::parse_module(text.str(), options_.replacement_ptx);
    for (const ptx::Function& f : replacement.functions)
      if (f.is_entry && !f.body.empty() && m.module.function_index.count(f.name)) {
        m.module = std::move(replacement);
        return;
      }
  }

  static void build(KernelEntry& e) {
    if (!e.program)
      e.program = make_program(e.module->module, *e.function, e.module->variable_address, e.module->shared_end,
                               e.module->extern_align);
  }

  // Global variables get host storage in the allocation table; shared ones consecutive shared
  // addresses from kSharedBase (make_program places the .extern array per kernel).
  void lay_out_variables(LoadedModule& m) {
    uint32_t shared = kSharedBase;
    uint32_t extern_align = 16;
    for (const ptx::Variable& v : m.module.variables) {
      if (v.space == ptx::Space::shared) {
        if (v.is_extern) {
          extern_align = std::max(extern_align, v.align);
          m.variable_address.push_back(0);  // per kernel: after its own static variables
          continue;
        }
        shared = (shared + v.align - 1) / v.align * v.align;
        m.variable_address.push_back(shared);
        shared += static_cast<uint32_t>(v.size);
      } else {
        const size_t bytes = std::max<uint64_t>(v.size, 1);
        auto storage = std::make_unique<uint8_t[]>(bytes + 256);
        uint8_t* p = storage.get() + (256 - reinterpret_cast<uintptr_t>(storage.get()) % 256) % 256;
        std::memset(p, 0, bytes);
        std::memcpy(p, v.init.data(), std::min<size_t>(v.init.size(), bytes));
        globals_.add(p, bytes, "module variable " + v.name);
        m.variable_address.push_back(reinterpret_cast<uint64_t>(p));
        m.storage.push_back(std::move(storage));
      }
    }
    m.shared_end = shared;
    m.extern_align = extern_align;
  }

  void record(std::string_view name, const LaunchStats& s) {
    if (options_.stats_path.empty()) return;
    std::ofstream out(options_.stats_path, std::ios::app);
    out << "{\"kernel\": \"" << name << "\", \"seed\": " << options_.seed << ", \"ctas_run\": " << s.ctas_run
        << ", \"ctas_in_grid\": " << s.ctas_in_grid << ", \"warp_instructions\": " << s.warp_instructions
        << ", \"thread_instructions\": " << s.thread_instructions << ", \"seconds\": " << s.seconds << "}\n";
  }

  Options options_;
  AllocationTable globals_;
  mutable std::mutex mutex_;
  std::vector<std::unique_ptr<LoadedModule>> modules_;
  std::unordered_map<std::string, KernelEntry> kernels_;
};

}  // namespace

Device& Device::get() {
  // Never destroyed: programs free device memory from the destructors of their own globals
  // (CUTLASS's examples hold cutlass::DeviceAllocation globals), which run after a function-local
  // static constructed later would already be gone.
  static EmulatedDevice* device = new EmulatedDevice;
  return *device;
}

}  // namespace kgen::emu
