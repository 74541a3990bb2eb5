// Faces that OpenCASCADE cannot mesh or translate (issue: a face that fails to mesh, an IGES
// trimmed surface whose trim fails). The files are the box and the sheet of cad_test_files.hpp
// with one entity edited in their text, as a damaged export would have it. What OpenCASCADE 7.6
// does with each, and what the reader must make of it:
// - STEP, a face's plane replaced by a cylinder of radius 0 (a degenerate surface), and a face
//   whose loop runs along one edge and back (zero area): the face does not mesh; the part is read
//   with a note giving the count of faces lost.
// - IGES, a trimmed surface (144) whose boundary leaves its plane: the face does not mesh, as above.
// - IGES, a trimmed surface whose surface pointer names a curve: the translator drops the entity
//   without an error; the reader counts it and says so.
// - STEP, the only face of a sheet on a cylinder of radius 0: nothing of any size is left; refused
//   with one line (exit 3).
#include <string>

#include <nlohmann/json.hpp>

#include "cad_test_files.hpp"
#include "core/error.hpp"
#include "mesh/mesh.hpp"

using namespace cad_test;

namespace {

// `bytes` with `from` replaced by `to` once; the test stops when `from` is not there (the writer
// numbers its entities in another way).
std::string edited(std::string bytes, const std::string& from, const std::string& to) {
    const std::size_t at = bytes.find(from);
    EXPECT_NE(at, std::string::npos) << "not in the file: " << from;
    return at == std::string::npos ? bytes : bytes.replace(at, from.size(), to);
}

// An IGES parameter line's data (its first 64 columns) replaced, the columns after kept.
std::string edited_iges(const std::string& bytes, const std::string& from, const std::string& to) {
    return edited(bytes, std::string(from).append(64 - from.size(), ' '), std::string(to).append(64 - to.size(), ' '));
}

fs::path box_step() { return write_step(BRepPrimAPI_MakeBox(10, 20, 30).Shape(), "faces-box.step"); }
fs::path box_iges() { return write_iges(BRepPrimAPI_MakeBox(10, 20, 30).Shape(), "faces-box.igs", false); }

fs::path damaged(const fs::path& from, const std::string& name, const std::string& bytes) {
    const fs::path out = temp_dir() / name;
    spill(out, bytes);
    EXPECT_NE(bytes, slurp(from));
    return out;
}

// The box read with one face short: 10 of its 12 triangles, the hole's 4 edges open, and one note
// that says `says`.
void expect_box_with_a_hole(const fs::path& file, const std::string& says) {
    const hp::LoadedMesh m = hp::load_mesh(file);
    EXPECT_EQ(m.diagnostics.triangles, 10u) << file;
    EXPECT_EQ(m.diagnostics.boundary_edges, 4u) << file;
    EXPECT_FALSE(m.diagnostics.watertight);
    ASSERT_EQ(m.notes.size(), 1u) << file;
    EXPECT_NE(m.notes[0].find(says), std::string::npos) << m.notes[0];
}

// The message of the error that reading `file` throws, which must be a refusal (exit code 3).
std::string refusal(const fs::path& file) {
    try {
        hp::load_mesh(file);
    } catch (const hp::Error& e) {
        EXPECT_EQ(e.code(), hp::ExitCode::bad_input) << e.what();
        return e.what();
    }
    ADD_FAILURE() << file << " was read";
    return {};
}

}  // namespace

TEST(CadFaces, TheWrittenBoxIsWhole) {  // what the edits below take away from
    const hp::LoadedMesh s = hp::load_mesh(box_step()), i = hp::load_mesh(box_iges());
    for (const hp::LoadedMesh* m : {&s, &i}) {
        EXPECT_EQ(m->diagnostics.triangles, 12u);
        EXPECT_TRUE(m->diagnostics.watertight);
        EXPECT_TRUE(m->notes.empty());
    }
}

TEST(CadFaces, StepFaceOfZeroAreaLeavesAHoleAndANote) {
    // The first face's loop becomes its first edge, forward and back.
    std::string bytes = edited(slurp(box_step()), "#18 = FACE_BOUND('',#19,.F.);", "#18 = FACE_BOUND('',#9002,.F.);");
    bytes = edited(bytes, "ENDSEC;\nEND-ISO-10303-21;",
                   "#9001 = ORIENTED_EDGE('',*,*,#21,.T.);\n#9002 = EDGE_LOOP('',(#20,#9001));\nENDSEC;\nEND-ISO-10303-21;");
    expect_box_with_a_hole(damaged(box_step(), "zero-area.step", bytes), "1 of 6 faces did not mesh");
}

TEST(CadFaces, StepFaceOnADegenerateSurfaceIsReportedAndTheToolsSayIt) {
    const fs::path file = damaged(box_step(), "degenerate.step",
                                  edited(slurp(box_step()), "#32 = PLANE('',#33);", "#32 = CYLINDRICAL_SURFACE('',#33,0.);"));
    const hp::LoadedMesh m = hp::load_mesh(file);
    ASSERT_EQ(m.notes.size(), 1u);
    EXPECT_NE(m.notes[0].find("1 of 6 faces did not mesh (face 1"), std::string::npos) << m.notes[0];
    // haptic-dump carries the note in --json; haptic-voxelize warns, naming the file.
    const fs::path json = temp_dir() / "degenerate.json", err = temp_dir() / "degenerate.err";
    ASSERT_EQ(run("haptic-dump --json " + file.string(), "> " + json.string() + " 2>/dev/null"), 0);
    const nlohmann::json dump = nlohmann::json::parse(slurp(json));
    ASSERT_EQ(dump.at("notes").size(), 1u) << dump.dump();
    EXPECT_EQ(dump.at("notes")[0].get<std::string>(), m.notes[0]);
    ASSERT_EQ(run("haptic-voxelize " + file.string() + " --resolution 16 -o " + (temp_dir() / "degenerate.vdb").string(),
                  ">/dev/null 2> " + err.string()),
              0);
    EXPECT_NE(slurp(err).find("warning: " + file.string() + ": part '"), std::string::npos) << slurp(err);
}

TEST(CadFaces, IgesTrimOffItsSurfaceLeavesAHoleAndANote) {
    // The first face lies in the plane x = 0; one line of its boundary moves to x = 5.
    const std::string bytes = edited_iges(slurp(box_iges()), "110,0.,0.,0.,0.,0.,30.;", "110,5.,0.,0.,5.,0.,30.;");
    expect_box_with_a_hole(damaged(box_iges(), "trim-off-plane.igs", bytes), "1 of 6 faces did not mesh");
}

TEST(CadFaces, IgesTrimmedSurfaceTheTranslatorDropsIsCounted) {
    // The first trimmed surface's surface pointer names its boundary's composite curve (D9).
    const std::string bytes = edited_iges(slurp(box_iges()), "144,5,1,0,7;", "144,9,1,0,7;");
    expect_box_with_a_hole(damaged(box_iges(), "trim-on-a-curve.igs", bytes),
                           "1 of 6 faces and trimmed surfaces of the IGES file gave no shape (type 144 at D3)");
}

TEST(CadFaces, NothingLeftToMeshIsRefusedWithOneLine) {
    const fs::path sheet_file = write_step(sheet(), "faces-sheet.step");
    const fs::path file = damaged(sheet_file, "collapsed-sheet.step",
                                  edited(slurp(sheet_file), "#32 = PLANE('',#33);", "#32 = CYLINDRICAL_SURFACE('',#33,0.);"));
    const std::string what = refusal(file);
    EXPECT_NE(what.find(file.string()), std::string::npos) << what;
    EXPECT_NE(what.find("collapsed to a line or a point"), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    EXPECT_EQ(run("haptic-dump " + file.string()), 3);
}

// An IGES circular arc whose end point is not on the circle its start point gives: OpenCASCADE's
// shape healing ran for minutes on such a file (tests/fuzz/regressions/iges). Refused before the
// transfer, naming the arc.
TEST(CadFaces, IgesArcThatEndsOffItsCircleIsRefused) {
    const fs::path cylinder = fs::path(HP_SOURCE_DIR) / "tests" / "fuzz" / "corpus" / "iges" / "cylinder.igs";
    EXPECT_GT(hp::load_mesh(cylinder).mesh.triangles.size(), 0u);
    const fs::path file = damaged(cylinder, "arc-off-its-circle.igs",
                                  edited_iges(slurp(cylinder), "100,0.,0.,0.,5.,0.,5.,0.;", "100,0.,0.,0.,5.,0.,4.,0.;"));
    const std::string what = refusal(file);
    EXPECT_NE(what.find("IGES circular arc 19 starts 5 and ends 4 from its centre"), std::string::npos) << what;
}

// A STEP entity that refers to itself, directly or through others, is refused before OpenCASCADE
// follows the references (a GEOMETRIC_CURVE_SET listing itself kept it busy for more than ten
// minutes; tests/fuzz/regressions/step); references inside strings and comments are not references.
TEST(CadFaces, StepReferenceCyclesAreRefused) {
    const std::string box = slurp(box_step());
    ASSERT_NE(box.find("#17 = ADVANCED_FACE('',(#18),#32,.F.);"), std::string::npos);
    const fs::path quoted = damaged(box_step(), "quoted.step", edited(edited(box, "PRODUCT('", "PRODUCT('#16 it''s #3 "), "DATA;", "DATA;\n/* #16 = X(#16); */"));
    EXPECT_EQ(hp::load_mesh(quoted).diagnostics.triangles, 12u);
    const std::string self = refusal(damaged(box_step(), "self.step", edited(box, "#18 = FACE_BOUND('',#19,.F.);", "#18 = FACE_BOUND('',#18,.F.);")));
    EXPECT_NE(self.find("STEP entity #18 refers to itself (a cycle of references"), std::string::npos) << self;
    const std::string loop = refusal(damaged(box_step(), "loop.step", edited(box, "#18 = FACE_BOUND('',#19,.F.);", "#18 = FACE_BOUND('',#17,.F.);")));
    EXPECT_NE(loop.find("STEP entity #17 refers to itself through #18"), std::string::npos) << loop;
    // An entity number defined twice is refused (OpenCASCADE reports it as a failure and resolves
    // references to it by position), unless the file has &SCOPE blocks, where numbers may repeat.
    const std::string twice = refusal(damaged(box_step(), "twice.step", edited(box, "DATA;", "DATA;\n#18 = FACE_BOUND('',#19,.F.);")));
    EXPECT_NE(twice.find("STEP entity #18 is defined twice"), std::string::npos) << twice;
    const std::string quoted_twice = edited(box, "DATA;", "DATA;\n#9999 = CARTESIAN_POINT('#18 = FACE_BOUND(',(0.,0.,0.)); /* #18 = Y(); */");
    EXPECT_EQ(hp::load_mesh(damaged(box_step(), "twice-in-a-string.step", quoted_twice)).diagnostics.triangles, 12u);
    // A quote opens a string that OpenCASCADE 7.6's lexer ends at the next quote followed by ',' or
    // ')' (here the one after 'international standard'): the references after that are read (found
    // by fuzzing step: a quote lost in the header had made the check read the rest as one string).
    std::string unclosed = edited(box, "#18 = FACE_BOUND('',#19,.F.);", "#18 = FACE_BOUND('',#18,.F.);");
    unclosed.insert(unclosed.find("DATA;") + 5, " '\x01 ");
    const std::string shifted = refusal(damaged(box_step(), "unclosed.step", unclosed));
    EXPECT_NE(shifted.find("STEP entity #18 refers to itself"), std::string::npos) << shifted;
}

// A number beyond a double's range, which OpenCASCADE reads as infinity: its shape healing ran for
// minutes on a STEP point at 1.E+30810 (tests/fuzz/regressions/step), and forever on an edge of a
// line through such a point. Refused before it is read; the same digits inside a string or a comment
// are not a number, and a quote that opens no string to OpenCASCADE's lexer hides none.
TEST(CadFaces, NumbersBeyondADoubleAreRefused) {
    const std::string box = slurp(box_step());
    const fs::path named = damaged(box_step(), "named.step", edited(edited(box, "PRODUCT('", "PRODUCT('1.E+30810 "), "DATA;", "DATA;\n/* 1.E+30810 */"));
    EXPECT_EQ(hp::load_mesh(named).diagnostics.triangles, 12u);
    const fs::path file = damaged(box_step(), "infinite-point.step",
                                  edited(box, "CARTESIAN_POINT('',(0.,0.,0.))", "CARTESIAN_POINT('',(1.E+30810,0.,0.))"));
    const std::string what = refusal(file);
    EXPECT_NE(what.find("the STEP number 1.E+30810 at byte"), std::string::npos) << what;
    // Found by fuzzing step: a string ends at a quote followed by ',' or ')' to the lexer, not at
    // every second quote; counting quotes had hidden the number after a lone one.
    std::string unclosed = edited(box, "CARTESIAN_POINT('',(0.,0.,0.))", "CARTESIAN_POINT('',(1.E+30810,0.,0.))");
    unclosed.insert(unclosed.find("DATA;") + 5, " '\x01 ");
    const std::string hidden = refusal(damaged(box_step(), "unclosed-infinite-point.step", unclosed));
    EXPECT_NE(hidden.find("the STEP number 1.E+30810 at byte"), std::string::npos) << hidden;
    // ... and a quote followed by other text does not end a string: the digits after it are the string's.
    const fs::path inside = damaged(box_step(), "number-in-a-string.step", edited(box, "PRODUCT('", "PRODUCT('it' 1.E+30810 '"));
    EXPECT_EQ(hp::load_mesh(inside).diagnostics.triangles, 12u);
    // IGES: in the parameter data (D exponents too), not in the columns after it.
    const fs::path cylinder = fs::path(HP_SOURCE_DIR) / "tests" / "fuzz" / "corpus" / "iges" / "cylinder.igs";
    const fs::path iges = damaged(cylinder, "infinite-arc.igs",
                                  edited_iges(slurp(cylinder), "100,0.,0.,0.,5.,0.,5.,0.;", "100,0.,0.,0.,5.D999,0.,5.,0.;"));
    EXPECT_NE(refusal(iges).find("the IGES number 5.E999 at byte"), std::string::npos);
}
