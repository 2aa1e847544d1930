// A driver for measuring the C++ CORELS reference side by side with optrules (benchmarks/corels_suite.py).
// It is linked, by build.sh, against the sources of PyPI corels 1.1.29 (GPL), which are not part of
// optrules and are not stored here; only this file, written for this purpose against their run.h API, is.
//
// usage: corels_ref X.out X.label X.minor lambda max_nodes time_limit policy map_type
// Reads the reference's own file formats ("{name} 0 1 ..." lines), puts the default rule (every sample)
// at index 0 as the Python package does, runs run_corels_begin / run_corels_loop / run_corels_end with a
// wall-clock limit checked every 256 loop steps, and prints the library's "final ..." lines and
// RESULT objective=nan rules=K seconds=S early=0|1 (early: stopped by the time limit, not certified).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>
#include <fstream>
#include <chrono>
#include "run.h"
#include "rule.h"

static std::vector<std::string> names;
static int read_file(const char* path, std::vector<rule_t>& out, int& nsamples) {
    std::ifstream in(path);
    if (!in) { fprintf(stderr, "cannot open %s\n", path); exit(2); }
    std::string line;
    while (std::getline(in, line)) {
        if (line.empty()) continue;
        size_t close = line.find('}');
        std::string name = line.substr(1, close - 1);
        std::string bits = line.substr(close + 1);
        rule_t r; memset(&r, 0, sizeof r);
        int ones = 0;
        if (ascii_to_vector((char*)bits.c_str(), bits.size(), &nsamples, &ones, &r.truthtable) != 0) exit(3);
        r.features = strdup(name.c_str());
        r.support = ones;
        r.cardinality = 1;
        r.ids = NULL;
        out.push_back(r);
    }
    return 0;
}

int main(int argc, char** argv) {
    if (argc < 9) { fprintf(stderr, "usage\n"); return 1; }
    int nsamples = 0;
    std::vector<rule_t> rules, labels, minor;
    rule_t def; memset(&def, 0, sizeof def);
    rules.push_back(def);  // slot 0: the default rule, filled once nsamples is known
    read_file(argv[1], rules, nsamples);
    read_file(argv[2], labels, nsamples);
    read_file(argv[3], minor, nsamples);
    std::string all(nsamples, '1');
    int ones = 0, n = nsamples;
    ascii_to_vector((char*)all.c_str(), all.size(), &n, &ones, &rules[0].truthtable);
    rules[0].features = strdup("default");
    rules[0].support = nsamples;
    double c = atof(argv[4]);
    size_t max_nodes = strtoull(argv[5], NULL, 10);
    double limit = atof(argv[6]);
    int policy = atoi(argv[7]), map_type = atoi(argv[8]);
    char verbosity[] = "progress";
    auto start = std::chrono::steady_clock::now();
    if (run_corels_begin(c, verbosity, policy, map_type, 0, 0, (int)rules.size(), 2, nsamples,
                         rules.data(), labels.data(), minor.empty() ? NULL : minor.data()) != 0) return 4;
    int early = 0;
    long iter = 0;
    while (true) {
        if (run_corels_loop(max_nodes) != 0) break;
        if ((++iter & 255) == 0) {
            double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
            if (s > limit) { early = 1; break; }
        }
    }
    int *list = NULL, *classes = NULL, size = 0;
    run_corels_end(&list, &size, &classes, early);
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    printf("RESULT objective=nan rules=%d seconds=%f early=%d\n", size, s, early);
    return 0;
}
