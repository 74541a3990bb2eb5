// bench_cad --write FILE.step [--geometries G] [--instances I]
// bench_cad --peer FILE.step --linear-deflection D [--angular-deflection A] [--threads N]
// The STEP rows of make bench (bench/cad.sh). --write makes the generated assembly with
// OpenCASCADE: G distinct solids (cylinders, spheres, plates with a round hole through them, in
// millimetres, every one of another size), each placed I times, turned and spread on a grid, in
// one XCAF assembly: G x I parts. --peer is OpenCASCADE alone doing what the tools' import does
// with such a file, as a process: read it into an XCAF document and mesh every distinct solid
// once at the chord tolerance D (metres, as the tools take it; the file is in millimetres) with
// BRepMesh_IncrementalMesh, in parallel when --threads > 1. Prints one JSON line: the phases'
// seconds (read, mesh), parts, distinct solids, triangles. Time it from outside like the tools.
// This executable may include OpenCASCADE (it is a bench).
#include <chrono>
#include <iostream>
#include <set>
#include <string>

#include <nlohmann/json.hpp>
#include <tbb/task_arena.h>

#include <BRepBuilderAPI_MakeEdge.hxx>
#include <BRepBuilderAPI_MakeFace.hxx>
#include <BRepBuilderAPI_MakePolygon.hxx>
#include <BRepBuilderAPI_MakeWire.hxx>
#include <BRepMesh_IncrementalMesh.hxx>
#include <BRepPrimAPI_MakeCylinder.hxx>
#include <BRepPrimAPI_MakePrism.hxx>
#include <BRepPrimAPI_MakeSphere.hxx>
#include <BRep_Tool.hxx>
#include <Message.hxx>
#include <Message_Messenger.hxx>
#include <Message_PrinterOStream.hxx>
#include <Poly_Triangulation.hxx>
#include <STEPCAFControl_Reader.hxx>
#include <STEPCAFControl_Writer.hxx>
#include <TDF_LabelSequence.hxx>
#include <TDataStd_Name.hxx>
#include <TDocStd_Document.hxx>
#include <TopExp_Explorer.hxx>
#include <TopoDS.hxx>
#include <XCAFApp_Application.hxx>
#include <XCAFDoc_DocumentTool.hxx>
#include <XCAFDoc_ShapeTool.hxx>
#include <gp_Circ.hxx>

#include "common/tool.hpp"
#include "core/error.hpp"

namespace {

double seconds_since(std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// Solid g of the assembly, in millimetres: a cylinder, a sphere or a plate with a hole, in turn.
TopoDS_Shape solid(int g) {
    const double s = 1 + 0.1 * g;
    if (g % 3 == 0) return BRepPrimAPI_MakeCylinder(4 * s, 12 * s).Shape();
    if (g % 3 == 1) return BRepPrimAPI_MakeSphere(5 * s).Shape();
    const double a = 20 * s, r = 4 * s;
    const TopoDS_Wire outer =
        BRepBuilderAPI_MakePolygon(gp_Pnt(-a / 2, -a / 2, 0), gp_Pnt(a / 2, -a / 2, 0), gp_Pnt(a / 2, a / 2, 0), gp_Pnt(-a / 2, a / 2, 0), true)
            .Wire();
    BRepBuilderAPI_MakeFace face(outer, true);
    face.Add(TopoDS::Wire(BRepBuilderAPI_MakeWire(BRepBuilderAPI_MakeEdge(gp_Circ(gp::XOY(), r)).Edge()).Wire().Reversed()));
    return BRepPrimAPI_MakePrism(face.Face(), gp_Vec(0, 0, 6 * s)).Shape();
}

void write_assembly(const std::string& path, int geometries, int instances) {
    Handle(TDocStd_Document) doc;
    XCAFApp_Application::GetApplication()->NewDocument("MDTV-XCAF", doc);
    Handle(XCAFDoc_ShapeTool) shapes = XCAFDoc_DocumentTool::ShapeTool(doc->Main());
    const TDF_Label root = shapes->NewShape();
    TDataStd_Name::Set(root, "bench-assembly");
    for (int g = 0; g < geometries; ++g) {
        const TDF_Label label = shapes->AddShape(solid(g), false);
        TDataStd_Name::Set(label, ("solid" + std::to_string(g + 1)).c_str());
        for (int i = 0; i < instances; ++i) {
            gp_Trsf t;
            t.SetRotation(gp::OZ(), 0.3 * i);
            t.SetTranslationPart(gp_Vec(60.0 * i, 60.0 * g, 0));
            const TDF_Label c = shapes->AddComponent(root, label, TopLoc_Location(t));
            TDataStd_Name::Set(c, ("s" + std::to_string(g + 1) + "-" + std::to_string(i + 1)).c_str());
        }
    }
    shapes->UpdateAssemblies();
    STEPCAFControl_Writer writer;
    if (!writer.Transfer(doc, STEPControl_AsIs) || writer.Write(path.c_str()) != IFSelect_RetDone)
        hp::fail_write(path, "OpenCASCADE could not write the assembly");
}

nlohmann::json peer(const std::string& path, double linear_m, double angular, int threads) {
    const auto t0 = std::chrono::steady_clock::now();
    Handle(TDocStd_Document) doc;
    XCAFApp_Application::GetApplication()->NewDocument("MDTV-XCAF", doc);
    STEPCAFControl_Reader reader;
    reader.SetNameMode(true);
    reader.SetColorMode(false);
    reader.SetLayerMode(false);
    if (reader.ReadFile(path.c_str()) != IFSelect_RetDone || !reader.Transfer(doc)) hp::fail_input(path, "OpenCASCADE could not read it");
    const double t_read = seconds_since(t0);

    // Every distinct solid once (the parts are instances of them), as the tools mesh them.
    const auto t1 = std::chrono::steady_clock::now();
    Handle(XCAFDoc_ShapeTool) shapes = XCAFDoc_DocumentTool::ShapeTool(doc->Main());
    TDF_LabelSequence labels;
    shapes->GetShapes(labels);
    std::size_t parts = 0, solids = 0, triangles = 0;
    for (Standard_Integer i = 1; i <= labels.Length(); ++i) {
        if (XCAFDoc_ShapeTool::IsAssembly(labels.Value(i))) {
            TDF_LabelSequence components;
            XCAFDoc_ShapeTool::GetComponents(labels.Value(i), components, false);
            parts += static_cast<std::size_t>(components.Length());
            continue;
        }
        const TopoDS_Shape shape = XCAFDoc_ShapeTool::GetShape(labels.Value(i));
        BRepMesh_IncrementalMesh mesher(shape, linear_m * 1000, false, angular, threads > 1);
        ++solids;
        for (TopExp_Explorer fx(shape, TopAbs_FACE); fx.More(); fx.Next()) {
            TopLoc_Location loc;
            const Handle(Poly_Triangulation) tri = BRep_Tool::Triangulation(TopoDS::Face(fx.Current()), loc);
            if (!tri.IsNull()) triangles += static_cast<std::size_t>(tri->NbTriangles());
        }
    }
    return {{"stage", "occt-import"}, {"file", path},         {"parts", parts},
            {"solids", solids},       {"triangles", triangles}, {"threads", threads},
            {"seconds", {{"read", t_read}, {"mesh", seconds_since(t1)}, {"total", seconds_since(t0)}}}};
}

}  // namespace

int main(int argc, char** argv) {
    hp::app::Tool tool("bench_cad", "The generated STEP assembly of make bench, and OpenCASCADE alone reading and meshing it.",
                       "Examples:\n  bench_cad --write asm100.step --geometries 10 --instances 10\n"
                       "  bench_cad --peer asm100.step --linear-deflection 0.0001 --threads 2\n");
    std::string write, read;
    int geometries = 10, instances = 10;
    double linear = 0, angular = 0.35;
    tool.cli.add_option("--write", write, "write the generated assembly to this STEP file");
    tool.cli.add_option("--geometries", geometries, "distinct solids")->check(CLI::Range(1, 1000));
    tool.cli.add_option("--instances", instances, "placements of each")->check(CLI::Range(1, 1000));
    tool.cli.add_option("--peer", read, "read and mesh this STEP file with OpenCASCADE alone");
    tool.cli.add_option("--linear-deflection", linear, "chord tolerance in metres (the file is in millimetres)");
    tool.cli.add_option("--angular-deflection", angular, "radians");
    return tool.run(argc, argv, [&] {
        Message::DefaultMessenger()->RemovePrinters(STANDARD_TYPE(Message_PrinterOStream));
        if (!write.empty()) {
            write_assembly(write, geometries, instances);
            std::cout << nlohmann::json{{"written", write}, {"parts", geometries * instances}, {"solids", geometries}}.dump() << std::endl;
            return 0;
        }
        if (read.empty() || !(linear > 0)) hp::fail_usage("give --write FILE, or --peer FILE with --linear-deflection D");
        // --threads (the tool's): 1 meshes on one core, more with OpenCASCADE's parallel mesher.
        const int threads = static_cast<int>(tbb::this_task_arena::max_concurrency());
        std::cout << peer(read, linear, angular, threads).dump() << std::endl;
        return 0;
    });
}
