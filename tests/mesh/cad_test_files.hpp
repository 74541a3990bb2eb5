#pragma once
// The STEP and IGES files of the CAD tests, written with OpenCASCADE's own writers into a folder of
// the run (removed at exit), and the functions that run the tools on them. Shared by cad_occt_test.cpp
// (what the reader makes of each file) and cad_damage_test.cpp (damaged copies of every file).
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <BRepBuilderAPI_MakeEdge.hxx>
#include <BRepBuilderAPI_MakeFace.hxx>
#include <BRepBuilderAPI_MakePolygon.hxx>
#include <BRepBuilderAPI_MakeSolid.hxx>
#include <BRepBuilderAPI_MakeWire.hxx>
#include <BRepPrimAPI_MakeBox.hxx>
#include <BRepPrimAPI_MakeCylinder.hxx>
#include <BRepPrimAPI_MakePrism.hxx>
#include <BRepPrimAPI_MakeSphere.hxx>
#include <IGESControl_Controller.hxx>
#include <IGESControl_Writer.hxx>
#include <Interface_Static.hxx>
#include <STEPCAFControl_Writer.hxx>
#include <STEPControl_Writer.hxx>
#include <StepData_StepModel.hxx>
#include <TDataStd_Name.hxx>
#include <TDocStd_Document.hxx>
#include <TopExp_Explorer.hxx>
#include <TopoDS.hxx>
#include <TopoDS_Shell.hxx>
#include <XCAFApp_Application.hxx>
#include <XCAFDoc_DocumentTool.hxx>
#include <XCAFDoc_ShapeTool.hxx>
#include <gp_Circ.hxx>
#include <gp_Pln.hxx>

namespace cad_test {

namespace fs = std::filesystem;

// One folder for the files of this run, removed at exit.
inline fs::path temp_dir() {
    static const struct Folder {
        fs::path path = fs::temp_directory_path() / ("hp_cad_test_" + std::to_string(::getpid()));
        Folder() { fs::create_directories(path); }
        ~Folder() {
            std::error_code ec;
            fs::remove_all(path, ec);
        }
    } folder;
    return folder.path;
}

// Shapes are built in millimetres (OpenCASCADE's unit); the file declares `unit` ("MM", "M",
// "INCH"), `unit_mm` millimetres long, and holds the coordinates converted to it.
inline fs::path write_step(const TopoDS_Shape& shape, const std::string& name, const char* unit = "MM", double unit_mm = 1) {
    const fs::path out = temp_dir() / name;
    STEPControl_Writer writer;
    Interface_Static::SetCVal("write.step.unit", unit);
    writer.Model()->SetLocalLengthUnit(1);
    writer.Model()->SetWriteLengthUnit(unit_mm);
    EXPECT_EQ(writer.Transfer(shape, STEPControl_AsIs), IFSelect_RetDone);
    EXPECT_EQ(writer.Write(out.c_str()), IFSelect_RetDone);
    Interface_Static::SetCVal("write.step.unit", "MM");
    return out;
}

// brep: B-rep solids (IGES 186); else trimmed surfaces (IGES 144).
inline fs::path write_iges(const TopoDS_Shape& shape, const std::string& name, bool brep = true) {
    const fs::path out = temp_dir() / name;
    IGESControl_Controller::Init();
    IGESControl_Writer writer("MM", brep ? 1 : 0);
    writer.AddShape(shape);
    writer.ComputeModel();
    EXPECT_TRUE(writer.Write(out.c_str()));
    return out;
}

constexpr double kPinRadius = 2, kPinHeight = 10;  // mm
struct PinPlacement {
    double x, y, angle;
};
constexpr PinPlacement kPins[4] = {{-12, -12, 0}, {12, -12, 0.5}, {12, 12, 1.0}, {-12, 12, 2.5}};

// A plate and four instances of one pin, each placed on it and turned about z.
inline fs::path write_fixture() {
    const fs::path out = temp_dir() / "fixture.step";
    if (fs::exists(out)) return out;
    Handle(TDocStd_Document) doc;
    XCAFApp_Application::GetApplication()->NewDocument("MDTV-XCAF", doc);
    Handle(XCAFDoc_ShapeTool) shapes = XCAFDoc_DocumentTool::ShapeTool(doc->Main());
    const TDF_Label plate = shapes->AddShape(BRepPrimAPI_MakeBox(gp_Pnt(-20, -20, 0), 40, 40, 5).Shape(), false);
    TDataStd_Name::Set(plate, "plate");
    const TDF_Label pin = shapes->AddShape(BRepPrimAPI_MakeCylinder(kPinRadius, kPinHeight).Shape(), false);
    TDataStd_Name::Set(pin, "pin");
    const TDF_Label assembly = shapes->NewShape();
    TDataStd_Name::Set(assembly, "fixture");
    TDataStd_Name::Set(shapes->AddComponent(assembly, plate, TopLoc_Location()), "plate");
    for (int i = 0; i < 4; ++i) {
        gp_Trsf t;
        t.SetRotation(gp::OZ(), kPins[i].angle);
        t.SetTranslationPart(gp_Vec(kPins[i].x, kPins[i].y, 6));  // 1 mm above the plate: apart, not touching
        TDataStd_Name::Set(shapes->AddComponent(assembly, pin, TopLoc_Location(t)), ("pin" + std::to_string(i + 1)).c_str());
    }
    shapes->UpdateAssemblies();
    STEPCAFControl_Writer writer;
    EXPECT_TRUE(writer.Transfer(doc, STEPControl_AsIs));
    EXPECT_EQ(writer.Write(out.c_str()), IFSelect_RetDone);
    return out;
}

// A cube of side 20 mm centred on the origin with a spherical void of radius 5 mm.
inline TopoDS_Shape hollow_solid() {
    BRepBuilderAPI_MakeSolid solid(TopoDS::Shell(TopExp_Explorer(BRepPrimAPI_MakeBox(gp_Pnt(-10, -10, -10), 20, 20, 20).Shape(),
                                                                 TopAbs_SHELL).Current()));
    TopoDS_Shape inner = TopExp_Explorer(BRepPrimAPI_MakeSphere(5).Shape(), TopAbs_SHELL).Current();
    solid.Add(TopoDS::Shell(inner.Reversed()));
    return solid.Solid();
}

// A square plate a x a, h thick, with a round hole of radius r through it: the square face with
// the circle as an inner wire, extruded.
inline TopoDS_Shape plate_with_hole(double a, double r, double h) {
    const TopoDS_Wire outer = BRepBuilderAPI_MakePolygon(gp_Pnt(-a / 2, -a / 2, 0), gp_Pnt(a / 2, -a / 2, 0), gp_Pnt(a / 2, a / 2, 0),
                                                         gp_Pnt(-a / 2, a / 2, 0), true)
                                  .Wire();
    const TopoDS_Wire circle = BRepBuilderAPI_MakeWire(BRepBuilderAPI_MakeEdge(gp_Circ(gp::XOY(), r)).Edge()).Wire();
    BRepBuilderAPI_MakeFace face(outer, true);
    face.Add(TopoDS::Wire(circle.Reversed()));
    return BRepPrimAPI_MakePrism(face.Face(), gp_Vec(0, 0, h)).Shape();
}

// A square sheet of 10 x 10 mm: an open surface, no solid.
inline TopoDS_Shape sheet() { return BRepBuilderAPI_MakeFace(gp_Pln(gp::Origin(), gp::DZ()), 0, 10, 0, 10).Shape(); }

// Every kind of file the CAD tests write: solids, a void, a hole, an open sheet, a curve only,
// an assembly, millimetres and inches, STEP and IGES (B-rep solids and trimmed surfaces).
inline std::vector<fs::path> all_test_files() {
    return {write_step(BRepPrimAPI_MakeBox(10, 20, 30).Shape(), "box-mm.step"),
            write_step(BRepPrimAPI_MakeBox(25.4, 25.4, 50.8).Shape(), "box-in.step", "INCH", 25.4),
            write_step(BRepPrimAPI_MakeCylinder(5, 10).Shape(), "cylinder.step"),
            write_step(BRepPrimAPI_MakeSphere(5).Shape(), "sphere.step"),
            write_step(hollow_solid(), "hollow.step"),
            write_step(plate_with_hole(20, 4, 6), "plate-with-hole.step"),
            write_step(sheet(), "sheet.step"),
            write_step(BRepBuilderAPI_MakeEdge(gp_Pnt(0, 0, 0), gp_Pnt(10, 0, 0)).Shape(), "edge.step"),
            write_fixture(),
            write_iges(BRepPrimAPI_MakeBox(10, 20, 30).Shape(), "box.iges"),
            write_iges(BRepPrimAPI_MakeCylinder(5, 10).Shape(), "cylinder.igs"),
            write_iges(plate_with_hole(20, 4, 6), "plate-with-hole-trimmed.igs", false)};
}

// Runs bin/TOOL ARGS (within a time limit), its output sent as `redirect` says; its exit code.
inline int run(const std::string& tool_and_args, const std::string& redirect = ">/dev/null 2>&1") {
    const std::string cmd = "timeout 120 " + (fs::path(HP_BINARY_DIR) / "bin" / "").string() + tool_and_args + " " + redirect;
    const int status = std::system(cmd.c_str());
    EXPECT_TRUE(WIFEXITED(status)) << cmd << " did not exit (a signal)";
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

inline std::string slurp(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline void spill(const fs::path& p, const std::string& bytes) { std::ofstream(p, std::ios::binary) << bytes; }

}  // namespace cad_test
