// Queries in your own loop: load the static distance field and the moving tree once, then one
// query per pose. Poses come from stdin, one per line: tx ty tz qw qx qy qz.
#include <cstdio>

#include <hapticprep/query/session.hpp>

int main(int argc, char** argv) {
    if (argc != 3) {
        std::fprintf(stderr, "usage: %s STATIC.dist.vdb MOVING.hps < poses.txt\n", argv[0]);
        return 2;
    }
    try {
        hp::QuerySession session(argv[1], argv[2], {.mode = hp::QueryMode::full});
        hp::Pose pose;
        auto& [t, q] = pose;
        while (std::scanf("%lf %lf %lf %lf %lf %lf %lf", &t.x, &t.y, &t.z, &q[0], &q[1], &q[2], &q[3]) == 7) {
            const hp::QueryResult& r = session.query(pose);  // no allocation once warm
            std::printf("%zu %.17g %.17g %.17g %.17g %.17g %.17g %.17g\n", r.contacts.size(), r.max_penetration,
                        r.force.x, r.force.y, r.force.z, r.torque.x, r.torque.y, r.torque.z);
        }
    } catch (const hp::Error& e) {  // bad files or options: one line, the tools' exit codes
        std::fprintf(stderr, "query_loop: %s\n", e.what());
        return e.exit_code();
    }
}
