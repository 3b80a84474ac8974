// vkstats: what a Vulkan driver makes of a compute shader. For each SPIR-V file given, it builds a compute pipeline
// with VK_KHR_pipeline_executable_properties' capture flags and prints the driver's statistics of every executable
// (on NVIDIA: register count, shared and local memory, binary size...) as one JSON line per file, and writes the
// driver's internal representations (where it gives any) beside the file as FILE.<executable>.<name>.txt.
// WebGPU hides all of this; Dawn's SPIR-V of a WGSL kernel (bench/vkstats/dump.ts) is what Chrome hands the driver.
//
// The descriptor set layouts come from the module itself (storage buffers and uniform buffers by their DescriptorSet /
// Binding decorations), the entry point is the module's first. Every feature the device has is enabled (Dawn's SPIR-V
// uses the Vulkan memory model). Loads libvulkan.so.1 at run time, so the binary needs no Vulkan library to link.
// Build: cc -O2 -o vkstats bench/vkstats/vkstats.c -ldl   (headers: Debian's libvulkan-dev)
#define VK_NO_PROTOTYPES
#include <vulkan/vulkan.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static PFN_vkGetInstanceProcAddr gipa;
#define IFN(name) PFN_##name name = (PFN_##name)gipa(inst, #name)
#define CHECK(x) do { VkResult r_ = (x); if (r_ != VK_SUCCESS) { fprintf(stderr, "vkstats: %s failed: %d\n", #x, r_); exit(2); } } while (0)

static uint32_t *readFile(const char *path, size_t *words) {
  FILE *f = fopen(path, "rb");
  if (!f) { perror(path); exit(2); }
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  uint32_t *buf = malloc(n);
  if (fread(buf, 1, n, f) != (size_t)n) { perror(path); exit(2); }
  fclose(f);
  *words = n / 4;
  return buf;
}

// The resources of a module: (set, binding, type) of every StorageBuffer / Uniform variable.
typedef struct { uint32_t set, binding; VkDescriptorType type; } Res;
static int reflect(const uint32_t *w, size_t n, Res *out, int max, char *entry, size_t entryLen) {
  enum { MAXID = 1 << 20 };
  static int32_t set[MAXID], bind[MAXID];
  static uint32_t ptrClass[MAXID];
  memset(set, -1, sizeof set); memset(bind, -1, sizeof bind); memset(ptrClass, 0, sizeof ptrClass);
  int count = 0;
  entry[0] = 0;
  for (size_t i = 5; i < n;) {
    uint32_t op = w[i] & 0xffff, len = w[i] >> 16;
    if (len == 0) break;
    if (op == 71 && len >= 4 && w[i + 1] < MAXID) { // OpDecorate id DescriptorSet(34) / Binding(33) value
      if (w[i + 2] == 34) set[w[i + 1]] = w[i + 3];
      if (w[i + 2] == 33) bind[w[i + 1]] = w[i + 3];
    } else if (op == 32 && w[i + 1] < MAXID) { // OpTypePointer result class type
      ptrClass[w[i + 1]] = w[i + 2] + 1;
    } else if (op == 15 && !entry[0]) { // OpEntryPoint model id name...
      strncpy(entry, (const char *)&w[i + 3], entryLen - 1);
      entry[entryLen - 1] = 0;
    } else if (op == 59 && w[i + 2] < MAXID && count < max) { // OpVariable type result class
      uint32_t id = w[i + 2], cls = w[i + 3];
      if (set[id] >= 0 && bind[id] >= 0 && (cls == 12 || cls == 2)) {
        out[count].set = set[id];
        out[count].binding = bind[id];
        out[count].type = cls == 12 ? VK_DESCRIPTOR_TYPE_STORAGE_BUFFER : VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER;
        count++;
      }
    }
    i += len;
  }
  return count;
}

static void printValue(const VkPipelineExecutableStatisticKHR *s) {
  switch (s->format) {
    case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_BOOL32_KHR: printf("%s", s->value.b32 ? "true" : "false"); break;
    case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_INT64_KHR: printf("%lld", (long long)s->value.i64); break;
    case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_UINT64_KHR: printf("%llu", (unsigned long long)s->value.u64); break;
    case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_FLOAT64_KHR: printf("%g", s->value.f64); break;
    default: printf("null");
  }
}

static void jsonString(const char *s) {
  putchar('"');
  for (; *s; s++) {
    if (*s == '"' || *s == '\\') putchar('\\');
    if ((unsigned char)*s >= 32) putchar(*s);
  }
  putchar('"');
}

int main(int argc, char **argv) {
  if (argc < 2) { fprintf(stderr, "usage: vkstats FILE.spv...\n"); return 1; }
  void *lib = dlopen("libvulkan.so.1", RTLD_NOW);
  if (!lib) { fprintf(stderr, "vkstats: %s\n", dlerror()); return 2; }
  gipa = (PFN_vkGetInstanceProcAddr)dlsym(lib, "vkGetInstanceProcAddr");
  VkInstance inst = VK_NULL_HANDLE;
  IFN(vkCreateInstance);
  VkApplicationInfo app = { .sType = VK_STRUCTURE_TYPE_APPLICATION_INFO, .pApplicationName = "vkstats", .apiVersion = VK_API_VERSION_1_3 };
  VkInstanceCreateInfo ici = { .sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO, .pApplicationInfo = &app };
  CHECK(vkCreateInstance(&ici, NULL, &inst));
  IFN(vkEnumeratePhysicalDevices); IFN(vkGetPhysicalDeviceProperties); IFN(vkGetPhysicalDeviceFeatures2);
  IFN(vkGetPhysicalDeviceQueueFamilyProperties); IFN(vkCreateDevice); IFN(vkGetDeviceProcAddr);
  uint32_t nd = 0;
  CHECK(vkEnumeratePhysicalDevices(inst, &nd, NULL));
  if (nd == 0) { fprintf(stderr, "vkstats: no Vulkan device\n"); return 2; }
  VkPhysicalDevice pds[16];
  if (nd > 16) nd = 16;
  CHECK(vkEnumeratePhysicalDevices(inst, &nd, pds));
  // The first discrete GPU, else the first device.
  VkPhysicalDevice pd = pds[0];
  VkPhysicalDeviceProperties props;
  for (uint32_t i = 0; i < nd; i++) {
    vkGetPhysicalDeviceProperties(pds[i], &props);
    if (props.deviceType == VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU) { pd = pds[i]; break; }
  }
  vkGetPhysicalDeviceProperties(pd, &props);
  fprintf(stderr, "vkstats: %s, driver %u\n", props.deviceName, props.driverVersion);
  VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR pexec = { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR };
  VkPhysicalDeviceVulkan13Features f13 = { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES, .pNext = &pexec };
  VkPhysicalDeviceVulkan12Features f12 = { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES, .pNext = &f13 };
  VkPhysicalDeviceVulkan11Features f11 = { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES, .pNext = &f12 };
  VkPhysicalDeviceFeatures2 f2 = { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, .pNext = &f11 };
  vkGetPhysicalDeviceFeatures2(pd, &f2);
  if (!pexec.pipelineExecutableInfo) { fprintf(stderr, "vkstats: the device has no VK_KHR_pipeline_executable_properties\n"); return 2; }
  uint32_t nq = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(pd, &nq, NULL);
  VkQueueFamilyProperties qf[32];
  if (nq > 32) nq = 32;
  vkGetPhysicalDeviceQueueFamilyProperties(pd, &nq, qf);
  uint32_t family = 0;
  for (uint32_t i = 0; i < nq; i++) if (qf[i].queueFlags & VK_QUEUE_COMPUTE_BIT) { family = i; break; }
  float prio = 1.0f;
  VkDeviceQueueCreateInfo qci = { .sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO, .queueFamilyIndex = family, .queueCount = 1, .pQueuePriorities = &prio };
  const char *exts[] = { VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME };
  VkDeviceCreateInfo dci = { .sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, .pNext = &f2, .queueCreateInfoCount = 1, .pQueueCreateInfos = &qci, .enabledExtensionCount = 1, .ppEnabledExtensionNames = exts };
  VkDevice dev;
  CHECK(vkCreateDevice(pd, &dci, NULL, &dev));
  PFN_vkGetDeviceProcAddr gdpa = vkGetDeviceProcAddr;
#define DFN(name) PFN_##name name = (PFN_##name)gdpa(dev, #name)
  DFN(vkCreateShaderModule); DFN(vkCreateDescriptorSetLayout); DFN(vkCreatePipelineLayout); DFN(vkCreateComputePipelines);
  DFN(vkGetPipelineExecutablePropertiesKHR); DFN(vkGetPipelineExecutableStatisticsKHR); DFN(vkGetPipelineExecutableInternalRepresentationsKHR);
  DFN(vkDestroyPipeline); DFN(vkDestroyPipelineLayout); DFN(vkDestroyDescriptorSetLayout); DFN(vkDestroyShaderModule);
  for (int a = 1; a < argc; a++) {
    size_t words;
    uint32_t *code = readFile(argv[a], &words);
    Res res[64];
    char entry[256];
    int nres = reflect(code, words, res, 64, entry, sizeof entry);
    VkShaderModuleCreateInfo smci = { .sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO, .codeSize = words * 4, .pCode = code };
    VkShaderModule sm;
    CHECK(vkCreateShaderModule(dev, &smci, NULL, &sm));
    uint32_t nsets = 0;
    for (int i = 0; i < nres; i++) if (res[i].set + 1 > nsets) nsets = res[i].set + 1;
    VkDescriptorSetLayout dsl[8];
    for (uint32_t s = 0; s < nsets && s < 8; s++) {
      VkDescriptorSetLayoutBinding b[64];
      uint32_t nb = 0;
      for (int i = 0; i < nres; i++) if (res[i].set == s) {
        b[nb] = (VkDescriptorSetLayoutBinding){ .binding = res[i].binding, .descriptorType = res[i].type, .descriptorCount = 1, .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT };
        nb++;
      }
      VkDescriptorSetLayoutCreateInfo dslci = { .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO, .bindingCount = nb, .pBindings = b };
      CHECK(vkCreateDescriptorSetLayout(dev, &dslci, NULL, &dsl[s]));
    }
    VkPipelineLayoutCreateInfo plci = { .sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO, .setLayoutCount = nsets, .pSetLayouts = dsl };
    VkPipelineLayout pl;
    CHECK(vkCreatePipelineLayout(dev, &plci, NULL, &pl));
    VkComputePipelineCreateInfo cpci = {
      .sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
      .flags = VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR | VK_PIPELINE_CREATE_CAPTURE_INTERNAL_REPRESENTATIONS_BIT_KHR,
      .stage = { .sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO, .stage = VK_SHADER_STAGE_COMPUTE_BIT, .module = sm, .pName = entry },
      .layout = pl,
    };
    VkPipeline pipe;
    CHECK(vkCreateComputePipelines(dev, VK_NULL_HANDLE, 1, &cpci, NULL, &pipe));
    VkPipelineInfoKHR pinfo = { .sType = VK_STRUCTURE_TYPE_PIPELINE_INFO_KHR, .pipeline = pipe };
    uint32_t nexe = 0;
    CHECK(vkGetPipelineExecutablePropertiesKHR(dev, &pinfo, &nexe, NULL));
    VkPipelineExecutablePropertiesKHR exes[8];
    if (nexe > 8) nexe = 8;
    for (uint32_t e = 0; e < nexe; e++) exes[e] = (VkPipelineExecutablePropertiesKHR){ .sType = VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_PROPERTIES_KHR };
    CHECK(vkGetPipelineExecutablePropertiesKHR(dev, &pinfo, &nexe, exes));
    printf("{\"file\":"); jsonString(argv[a]);
    printf(",\"entry\":"); jsonString(entry);
    printf(",\"executables\":[");
    for (uint32_t e = 0; e < nexe; e++) {
      VkPipelineExecutableInfoKHR einfo = { .sType = VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_INFO_KHR, .pipeline = pipe, .executableIndex = e };
      uint32_t ns = 0;
      CHECK(vkGetPipelineExecutableStatisticsKHR(dev, &einfo, &ns, NULL));
      VkPipelineExecutableStatisticKHR *st = calloc(ns ? ns : 1, sizeof *st);
      for (uint32_t i = 0; i < ns; i++) st[i].sType = VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_STATISTIC_KHR;
      CHECK(vkGetPipelineExecutableStatisticsKHR(dev, &einfo, &ns, st));
      printf("%s{\"name\":", e ? "," : ""); jsonString(exes[e].name);
      printf(",\"subgroupSize\":%u,\"statistics\":{", exes[e].subgroupSize);
      for (uint32_t i = 0; i < ns; i++) { printf("%s", i ? "," : ""); jsonString(st[i].name); putchar(':'); printValue(&st[i]); }
      printf("},\"representations\":[");
      uint32_t nr = 0;
      if (vkGetPipelineExecutableInternalRepresentationsKHR(dev, &einfo, &nr, NULL) == VK_SUCCESS && nr > 0) {
        VkPipelineExecutableInternalRepresentationKHR *ir = calloc(nr, sizeof *ir);
        for (uint32_t i = 0; i < nr; i++) ir[i].sType = VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_INTERNAL_REPRESENTATION_KHR;
        vkGetPipelineExecutableInternalRepresentationsKHR(dev, &einfo, &nr, ir);
        for (uint32_t i = 0; i < nr; i++) ir[i].pData = calloc(ir[i].dataSize + 1, 1);
        vkGetPipelineExecutableInternalRepresentationsKHR(dev, &einfo, &nr, ir);
        for (uint32_t i = 0; i < nr; i++) {
          char path[1024];
          snprintf(path, sizeof path, "%s.%u.%u.%s", argv[a], e, i, ir[i].isText ? "txt" : "bin");
          FILE *f = fopen(path, "wb");
          if (f) { fwrite(ir[i].pData, 1, ir[i].isText && ir[i].dataSize ? strlen(ir[i].pData) : ir[i].dataSize, f); fclose(f); }
          printf("%s{\"name\":", i ? "," : ""); jsonString(ir[i].name);
          printf(",\"bytes\":%zu,\"file\":", ir[i].dataSize); jsonString(path); putchar('}');
        }
      }
      printf("]}");
      free(st);
    }
    printf("]}\n");
    fflush(stdout);
    vkDestroyPipeline(dev, pipe, NULL);
    vkDestroyPipelineLayout(dev, pl, NULL);
    for (uint32_t s = 0; s < nsets && s < 8; s++) vkDestroyDescriptorSetLayout(dev, dsl[s], NULL);
    vkDestroyShaderModule(dev, sm, NULL);
    free(code);
  }
  return 0;
}
