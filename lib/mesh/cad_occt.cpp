// STEP and IGES through OpenCASCADE (mesh/cad.hpp): with cad_soup.cpp and cad_guard.cpp, the units that include its
// headers. They are not part of the library: they are built alone into the module hapticprep_cad.so
// (with the parts of the library they use), which read_cad_assembly() loads on the first STEP or
// IGES file, so that a tool that reads none never loads OpenCASCADE's 29 shared libraries.
// As Debian's OpenCASCADE is built (and as cad_guard.cpp, for the same layouts of its classes).
#define OCC_CONVERT_SIGNALS 1

#include "mesh/cad.hpp"
#include "mesh/cad_text.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cmath>
#include <cstdio>
#include <fstream>

#include "core/error.hpp"

#include <chrono>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>

#include <BRepBndLib.hxx>
#include <BRepGProp.hxx>
#include <BRepMesh_IncrementalMesh.hxx>
#include <BRep_Tool.hxx>
#include <Bnd_Box.hxx>
#include <GProp_GProps.hxx>
#include <IGESCAFControl_Reader.hxx>
#include <IGESData_IGESEntity.hxx>
#include <IGESData_IGESModel.hxx>
#include <IGESGeom_CircularArc.hxx>
#include <IGESControl_Reader.hxx>
#include <Interface_InterfaceModel.hxx>
#include <Message.hxx>
#include <Message_Messenger.hxx>
#include <Message_PrinterOStream.hxx>
#include <Poly_PolygonOnTriangulation.hxx>
#include <Poly_Triangulation.hxx>
#include <Precision.hxx>
#include <STEPCAFControl_Reader.hxx>
#include <STEPControl_Reader.hxx>
#include <TColStd_SequenceOfAsciiString.hxx>
#include <TDataStd_Name.hxx>
#include <TDocStd_Document.hxx>
#include <TDF_LabelSequence.hxx>
#include <TopExp.hxx>
#include <TopExp_Explorer.hxx>
#include <TopTools_IndexedMapOfShape.hxx>
#include <TopoDS.hxx>
#include <TopoDS_Edge.hxx>
#include <TopoDS_Face.hxx>
#include <TopoDS_Iterator.hxx>
#include <TopoDS_Vertex.hxx>
#include <TransferBRep.hxx>
#include <Transfer_TransientProcess.hxx>
#include <XCAFApp_Application.hxx>
#include <XCAFDoc_DocumentTool.hxx>
#include <XCAFDoc_ShapeTool.hxx>
#include <XSControl_Reader.hxx>
#include <XSControl_TransferReader.hxx>
#include <XSControl_WorkSession.hxx>

#include "core/atomic_file.hpp"
#include "core/hash.hpp"
#include "mesh/assembly_build.hpp"
#include "mesh/cad_guard.hpp"
#include "mesh/cad_soup.hpp"
#include "core/cpu.hpp"

namespace hp {

namespace {

// OpenCASCADE's messages go to std::cout by default: stdout carries the tools' --json.
void silence_occt() {
    static const bool done = [] {
        const Handle(Message_Messenger)& messenger = Message::DefaultMessenger();
        messenger->RemovePrinters(STANDARD_TYPE(Message_PrinterOStream));
        return true;
    }();
    (void)done;
}

std::string label_name(const TDF_Label& label) {
    Handle(TDataStd_Name) name;
    if (!label.FindAttribute(TDataStd_Name::GetID(), name)) return "";
    const TCollection_AsciiString ascii(name->Get(), '_');
    std::string s = ascii.ToCString();
    std::replace(s.begin(), s.end(), '/', '_');  // a path separator inside a name would split it
    return s;
}

// Metres per unit of a STEP length unit's name ("MILLIMETRE", ".MILLI. METRE", "INCH"...).
double step_unit_metres(std::string name, std::string& short_name) {
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
    const std::pair<const char*, std::pair<const char*, double>> units[] = {
        {"MICRO", {"um", 1e-6}}, {"MILLI", {"mm", 1e-3}}, {"CENTI", {"cm", 1e-2}}, {"DECI", {"dm", 0.1}},
        {"KILO", {"km", 1e3}},   {"INCH", {"in", 0.0254}}, {"FOOT", {"ft", 0.3048}}, {"FEET", {"ft", 0.3048}},
        {"METRE", {"m", 1.0}},   {"METER", {"m", 1.0}}};
    for (const auto& [key, unit] : units)
        if (name.find(key) != std::string::npos) {
            short_name = unit.first;
            return unit.second;
        }
    return 0;
}

// Metres per unit of an IGES file's unit flag (IGES 5.3, global parameter 14); 0 when unknown.
double iges_unit_metres(int flag, std::string& name) {
    const std::pair<const char*, double> units[] = {{"in", 0.0254}, {"mm", 1e-3},   {"in", 0.0254}, {"ft", 0.3048},
                                                    {"mi", 1609.344}, {"m", 1.0},   {"km", 1e3},    {"mil", 2.54e-5},
                                                    {"um", 1e-6},    {"cm", 1e-2}, {"uin", 2.54e-8}};
    if (flag < 1 || flag > 11) return 0;
    name = units[flag - 1].first;  // flag 3: the unit named in the file; taken as inches, the usual one
    return units[flag - 1].second;
}

struct Geometry {
    TopoDS_Shape shape;  // in its own frame
    std::string name;    // of its first part, for notes
};

struct Reader {
    std::string where;
    Handle(XCAFDoc_ShapeTool) shapes;
    std::vector<std::pair<std::string, TopoDS_Shape>> parts_of;  // filled by collect: path, located shape
    std::vector<TopLoc_Location> located;
    std::vector<std::string> notes;

    // The parts below `label` seen through `loc`: components of assemblies, the label's shape
    // otherwise (a top-level compound of solids: each solid).
    void collect(const TDF_Label& label, const TopLoc_Location& loc, const std::string& path, int depth, bool top) {
        if (depth > 1000) fail_input(where, "part '" + path + "': the assembly is cyclic or deeper than 1000 levels");
        if (XCAFDoc_ShapeTool::IsAssembly(label)) {
            TDF_LabelSequence components;
            XCAFDoc_ShapeTool::GetComponents(label, components, false);
            for (Standard_Integer i = 1; i <= components.Length(); ++i) {
                const TDF_Label& c = components.Value(i);
                TDF_Label referred;
                if (!XCAFDoc_ShapeTool::GetReferredShape(c, referred)) continue;
                std::string name = label_name(c);
                if (name.empty()) name = label_name(referred);
                if (name.empty()) name = "component" + std::to_string(i);
                collect(referred, loc * XCAFDoc_ShapeTool::GetLocation(c), path.empty() ? name : path + "/" + name,
                        depth + 1, false);
            }
            return;
        }
        const TopoDS_Shape shape = XCAFDoc_ShapeTool::GetShape(label);
        if (shape.IsNull()) return;
        std::string name = path.empty() ? label_name(label) : path;
        if (name.empty()) name = "shape";
        if (top && shape.ShapeType() == TopAbs_COMPOUND) {
            // A free compound is a bag of parts: each of its solids, its shells and faces together.
            std::vector<TopoDS_Shape> solids, rest;
            for (TopoDS_Iterator it(shape); it.More(); it.Next())
                (it.Value().ShapeType() == TopAbs_SOLID ? solids : rest).push_back(it.Value());
            if (solids.size() > 1) {
                for (std::size_t i = 0; i < solids.size(); ++i)
                    add(name + "/solid" + std::to_string(i + 1), loc, solids[i]);
                for (std::size_t i = 0; i < rest.size(); ++i) add(name + "/shape" + std::to_string(i + 1), loc, rest[i]);
                return;
            }
        }
        add(name, loc, shape);
    }

    void add(const std::string& path, const TopLoc_Location& loc, const TopoDS_Shape& shape) {
        parts_of.emplace_back(path, shape.Located(TopLoc_Location()));
        located.push_back(loc * shape.Location());
    }
};

constexpr double kMaxExtentPerDeflection = 1e6;
constexpr double kMinAngularDeflection = 0.01;  // rad

std::string format_g(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", v);
    return buf;
}

double seconds_since(std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// IGES circular arcs (type 100) whose start and end points are not at one distance from the centre,
// as the specification requires (to within the file's resolution, or 1e-3 of the radius): refused.
// OpenCASCADE builds the arc from the start point's radius and ends its edge at the end point, and
// its shape healing (ShapeFix, Approx_SameParameter) then ran for minutes on a 7.3 KB file whose
// arc's centre moved by half a unit (tests/fuzz/regressions/iges).
void check_iges_arcs(const Handle(IGESData_IGESModel)& model, const std::string& where) {
    const double resolution = model->GlobalSection().Resolution();
    for (int i = 1; i <= model->NbEntities(); ++i) {
        const Handle(IGESGeom_CircularArc) arc = Handle(IGESGeom_CircularArc)::DownCast(model->Entity(i));
        if (arc.IsNull()) continue;
        const double start = arc->Center().Distance(arc->StartPoint()), end = arc->Center().Distance(arc->EndPoint());
        if (!(std::abs(start - end) <= std::max(1e-3 * std::max(start, end), resolution)))
            fail_input(where, "IGES circular arc " + std::to_string(model->DNum(arc)) + " starts " + format_g(start) +
                                  " and ends " + format_g(end) + " from its centre (damaged file; check or export it again)");
    }
}

// The file's bytes are a whole STEP or IGES file: not empty, starting as one, not cut short.
void check_cad_bytes(const std::string& where, const std::string& kind, const std::string& format, const std::string& bytes) {
    if (bytes.empty()) fail_input(where, "the file is empty (0 bytes)");
    if (cad_kind(std::string_view(bytes).substr(0, 128)) != kind)
        fail_input(where, "not a " + format + " file (it does not start as one: " +
                              (kind == "step" ? std::string("ISO-10303-21;") : std::string("'S' in column 73")) +
                              "); check the file or its extension");
    // A file cut short: STEP ends with END-ISO-10303-21;, IGES with its Terminate record ('T' in column 73).
    std::size_t end = bytes.find_last_not_of(" \t\r\n\x1a");
    end = end == std::string::npos ? 0 : end + 1;
    const std::size_t line = bytes.find_last_of("\r\n", end == 0 ? 0 : end - 1);
    const std::string_view last = std::string_view(bytes).substr(line == std::string::npos ? 0 : line + 1, end - (line == std::string::npos ? 0 : line + 1));
    const bool cut_short = kind == "step" ? std::string_view(bytes).substr(0, end).find("END-ISO-10303-21;", end >= 64 ? end - 64 : 0) == std::string::npos
                                          : last.size() < 73 || last[72] != 'T';
#ifdef HP_FUZZ_CANARY
    // The fuzzing canaries of step and iges (docs/fuzzing.md): the check of the file's end below left out.
    if (cut_short) __builtin_trap();
#endif
    if (cut_short)
        fail_input(where, "the " + format + " file is cut short (no " +
                              (kind == "step" ? std::string("END-ISO-10303-21; at its end") : std::string("Terminate section")) +
                              "); copy or export it again");
    check_cad_numbers(where, format, bytes);
    if (kind == "step") check_step_references(where, bytes);
}

// The file's shapes transferred into an XCAF document, and the file's length unit: metres per unit
// and its name (STEP: its declared unit, else millimetres; IGES: its global section's flag).
struct CadDocument {
    Handle(TDocStd_Document) doc;
    double file_metres = 0;
    std::string file_unit;
    std::string lost;  // a note on the entities that gave no shape (lost_entities), or empty
};

// The file's entities that stand for faces or parts and that the transfer left without a shape:
// OpenCASCADE's translator drops them whole, with no error (an IGES trimmed surface whose surface
// pointer or trim is damaged, say). IGES: its faces, trimmed and bounded surfaces (types 510, 144,
// 143); STEP: its root products. A note saying how many and which (IGES: type and directory
// line; STEP: entity number and type), or "" when every one gave a shape.
std::string lost_entities(XSControl_Reader& reader, const std::string& format) {
    const Handle(XSControl_TransferReader) transfer = reader.WS()->TransferReader();
    const Handle(Interface_InterfaceModel) model = reader.WS()->Model();
    if (transfer.IsNull() || model.IsNull()) return "";
    const Handle(Transfer_TransientProcess) process = transfer->TransientProcess();
    const bool iges = format == "IGES";
    const int count = iges ? model->NbEntities() : reader.NbRootsForTransfer();
    int considered = 0, lost = 0;
    std::string which;
    for (int i = 1; i <= count; ++i) {
        const Handle(Standard_Transient) entity = iges ? model->Value(i) : reader.RootForTransfer(i);
        const Handle(IGESData_IGESEntity) face = Handle(IGESData_IGESEntity)::DownCast(entity);
        if (iges && (face.IsNull() || (face->TypeNumber() != 510 && face->TypeNumber() != 144 && face->TypeNumber() != 143)))
            continue;
        ++considered;
        const bool has_shape = iges ? !process.IsNull() && !TransferBRep::ShapeResult(process, entity).IsNull()
                                    : !entity.IsNull() && !transfer->ShapeResult(entity).IsNull();
        if (has_shape || ++lost > 5) continue;
        const int number = model->Number(entity);
        which += (lost > 1 ? ", " : "") + (iges ? "type " + std::to_string(face->TypeNumber()) + " at D" + std::to_string(2 * number - 1)
                                                : "#" + std::to_string(number) + " " + entity->DynamicType()->Name());
    }
    if (lost == 0) return "";
    return std::to_string(lost) + " of " + std::to_string(considered) + (iges ? " faces and trimmed surfaces" : " products") +
           " of the " + format + " file gave no shape (" + which + (lost > 5 ? ", ..." : "") +
           "): OpenCASCADE could not translate them, so they are left out";
}

CadDocument transfer_cad(const std::filesystem::path& path, const std::string& where, const std::string& kind,
                         const std::string& format, const std::string& bytes) {
    CadDocument cad;
    Handle(TDocStd_Document)& doc = cad.doc;
    double& file_metres = cad.file_metres;
    std::string& file_unit = cad.file_unit;
    XCAFApp_Application::GetApplication()->NewDocument("MDTV-XCAF", doc);
    bool transferred = false;
    if (kind == "step") {
        STEPCAFControl_Reader reader;
        reader.SetNameMode(true);
        reader.SetColorMode(false);
        reader.SetLayerMode(false);
        std::istringstream in(bytes);
        if (reader.ChangeReader().ReadStream(path.filename().c_str(), in) != IFSelect_RetDone)
            fail_input(where, "not a STEP file that can be read (its header or an entity is malformed)");
        TColStd_SequenceOfAsciiString lengths, angles, solid_angles;
        reader.ChangeReader().FileUnits(lengths, angles, solid_angles);
        if (lengths.Length() > 0) file_metres = step_unit_metres(lengths.First().ToCString(), file_unit);
        if (file_metres <= 0) {
            file_metres = 1e-3;  // what OpenCASCADE assumes for a file without a length unit
            file_unit = "mm (none declared)";
        }
        transferred = reader.Transfer(doc);
        cad.lost = lost_entities(reader.ChangeReader(), format);
    } else {
        IGESCAFControl_Reader reader;
        reader.SetNameMode(true);
        reader.SetColorMode(false);
        reader.SetLayerMode(false);
        if (reader.ReadFile(path.c_str()) != IFSelect_RetDone)
            fail_input(where, "not an IGES file that can be read (its sections or an entity are malformed)");
        const int flag = reader.IGESModel()->GlobalSection().UnitFlag();
        file_metres = iges_unit_metres(flag, file_unit);
        if (!(file_metres > 0)) fail_input(where, "the IGES global section has no valid unit (flag " + std::to_string(flag) + ")");
        check_iges_arcs(reader.IGESModel(), where);
        transferred = reader.Transfer(doc);
        cad.lost = lost_entities(reader, format);
    }
    if (!transferred) fail_input(where, "no shape could be read from the " + format + " file (no solid and no surface)");
    return cad;
}

Assembly read_cad(const std::filesystem::path& path, const MeshLoadOptions& options) {
    const std::string where = path.string();
    const std::string kind(cad_file_kind(path));
    const std::string format = kind == "iges" ? "IGES" : "STEP";
    const auto t_read = std::chrono::steady_clock::now();
    const std::string bytes = read_file(path);
    check_cad_bytes(where, kind, format, bytes);
    silence_occt();

    const CadDocument cad = transfer_cad(path, where, kind, format, bytes);
    const Handle(TDocStd_Document)& doc = cad.doc;
    const double file_metres = cad.file_metres;
    const std::string& file_unit = cad.file_unit;
    // The shapes are in the document's unit: the one the reader set, else OpenCASCADE's millimetre.
    double shape_metres = 1e-3;
    if (!XCAFDoc_DocumentTool::GetLengthUnit(doc, shape_metres) || !(shape_metres > 0)) shape_metres = 1e-3;

    Assembly out;
    out.source_name = path.filename().string();
    out.source_hash = hex64(hash64(bytes.data(), bytes.size()));
    out.units = "m";
    out.factor = unit_factor(options.units) * options.scale;
    // The soups' units: metres, or the file's own numbers when --units overrides its unit.
    const double soup_per_metre = options.units.empty() ? 1.0 : 1.0 / file_metres;
    const double out_per_metre = soup_per_metre * out.factor;
    const double soup_per_shape = soup_per_metre * shape_metres, out_per_shape = out_per_metre * shape_metres;
    if (!options.units.empty())
        out.notes.push_back("--units " + options.units + " overrides the file's unit (" + file_unit + ")");
    if (!cad.lost.empty()) out.notes.push_back(cad.lost);

    Reader reader{where, XCAFDoc_DocumentTool::ShapeTool(doc->Main()), {}, {}, {}};
    TDF_LabelSequence free;
    reader.shapes->GetFreeShapes(free);
    for (Standard_Integer i = 1; i <= free.Length(); ++i) {
        std::string name = label_name(free.Value(i));
        if (name.empty()) name = "shape" + std::to_string(i);
        reader.collect(free.Value(i), TopLoc_Location(), name, 0, true);
    }
    std::size_t faces = 0;
    for (const auto& part : reader.parts_of)
        for (TopExp_Explorer fx(part.second, TopAbs_FACE); fx.More(); fx.Next()) ++faces;
    if (faces == 0) fail_input(where, "no solid and no surface in the " + format + " file (only points or curves, or nothing)");
    // Bounds before meshing, for the default chord tolerance.
    Bnd_Box box;
    for (std::size_t i = 0; i < reader.parts_of.size(); ++i)
        BRepBndLib::Add(reader.parts_of[i].second.Located(reader.located[i]), box, false);
    if (box.IsVoid()) fail_input(where, "no solid and no surface in the " + format + " file (only points or curves, or nothing)");
    double x0, y0, z0, x1, y1, z1;
    box.Get(x0, y0, z0, x1, y1, z1);
    const double longest = std::max({x1 - x0, y1 - y0, z1 - z0}) * out_per_shape;
    double linear = options.linear_deflection;
    if (!(linear > 0)) linear = options.voxel_size > 0 ? 0.25 * options.voxel_size : 0.25 * longest / std::max(1, options.resolution);
    if (!(linear > 0) || !std::isfinite(linear))
        fail_input(where, "the shapes have no extent (a chord tolerance cannot be chosen; give --linear-deflection)");
    // The work is bounded before meshing: at a chord tolerance 10^6 times below the extent, a
    // sphere of that extent would mesh into about 2 million triangles by the chord-length
    // estimate (edges of sqrt(8 r d)), and at 10^8 times into about 200 million.
    if (longest / linear > kMaxExtentPerDeflection)
        fail_usage(where + ": the chord tolerance " + format_g(linear) + " m is " + format_g(longest / linear) +
                   " times smaller than the shapes' extent (" + format_g(longest) + " m), more than " +
                   format_g(kMaxExtentPerDeflection) + ": give a larger --linear-deflection or --voxel-size");
    if (!(options.angular_deflection >= kMinAngularDeflection) || !std::isfinite(options.angular_deflection))
        fail_usage("--angular-deflection must be at least " + format_g(kMinAngularDeflection) +
                   " rad (about 630 segments per circle), got " + format_g(options.angular_deflection));
    // OpenCASCADE's mesher refuses a chord tolerance below its precision (Precision::Confusion(),
    // 1e-7 in the shapes' unit): on a damaged file whose surfaces collapsed to a line or a point.
    if (linear / out_per_shape < Precision::Confusion())
        fail_input(where, "the shapes are " + format_g(longest) + " m long, so the chord tolerance " + format_g(linear) +
                              " m is below OpenCASCADE's precision: a surface collapsed to a line or a point; check the file");
    out.tessellation.format = kind;
    out.tessellation.linear_deflection = linear;
    out.tessellation.angular_deflection = options.angular_deflection;
    out.tessellation.file_unit = file_unit;
    out.tessellation.seconds_read = seconds_since(t_read);

    // Mesh each distinct shape once (instances share their faces), cores as the thread limit allows.
    const auto t_mesh = std::chrono::steady_clock::now();
    std::map<const void*, std::size_t> soup_of_shape;  // TShape -> index into soups
    std::vector<std::size_t> first_part;               // per soup: the part that first names its shape
    std::vector<std::size_t> soup_index;
    for (std::size_t i = 0; i < reader.parts_of.size(); ++i) {
        auto [it, fresh] = soup_of_shape.emplace(reader.parts_of[i].second.TShape().get(), first_part.size());
        if (fresh) first_part.push_back(i);
        soup_index.push_back(it->second);
    }
    std::vector<TriMesh> soups(first_part.size());
    std::vector<std::vector<std::string>> soup_notes(first_part.size());
    const std::vector<std::vector<std::size_t>> groups = cad_detail::mesh_groups(reader.parts_of, first_part);
    std::vector<std::size_t> meshing(groups.size());  // per group: the shape being meshed, named on a failure
    const std::optional<CadTaskFailure> failure = run_cad_tasks(groups.size(), static_cast<unsigned>(worker_threads()), [&](std::size_t g) {
        for (const std::size_t s : groups[g]) {
            meshing[g] = s;
            const auto& [name, shape] = reader.parts_of[first_part[s]];
            BRepMesh_IncrementalMesh mesher(shape, linear / out_per_shape, false, options.angular_deflection, false);
            soups[s] = cad_detail::shape_soup(shape, soup_per_shape, name, soup_notes[s]);
        }
    });
    if (failure)
        fail_input(where, "part '" + reader.parts_of[first_part[meshing[failure->task]]].first +
                              "': OpenCASCADE failed while meshing it (" + failure->what +
                              "); the file is damaged: check or export it again");
    std::vector<std::string> mesh_notes;
    for (const auto& notes : soup_notes) mesh_notes.insert(mesh_notes.end(), notes.begin(), notes.end());
    out.tessellation.seconds_mesh = seconds_since(t_mesh);

    AssemblyBuilder builder(out, where);
    std::vector<TopoDS_Shape> geometry_shapes;
    for (std::size_t i = 0; i < reader.parts_of.size(); ++i) {
        const gp_Trsf trsf = reader.located[i].Transformation();
        Mat3 a;
        for (int r = 0; r < 3; ++r)
            for (int c = 0; c < 3; ++c) a[r][c] = trsf.Value(r + 1, c + 1);
        const Vec3d t{trsf.Value(1, 4) * soup_per_shape, trsf.Value(2, 4) * soup_per_shape, trsf.Value(3, 4) * soup_per_shape};
        const TriMesh& local = soups[soup_index[i]];
        builder.add_part(reader.parts_of[i].first, a, t, [&](const Mat3& m, std::size_t&) {
            TriMesh soup = local;
            if (m != Mat3{{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}})
                for (Vec3d& v : soup.vertices)
                    v = {m[0][0] * v.x + m[0][1] * v.y + m[0][2] * v.z, m[1][0] * v.x + m[1][1] * v.y + m[1][2] * v.z,
                         m[2][0] * v.x + m[2][1] * v.y + m[2][2] * v.z};
            return soup;
        });
        if (out.geometries.size() > geometry_shapes.size()) geometry_shapes.push_back(reader.parts_of[i].second);
    }
    out.notes.insert(out.notes.end(), mesh_notes.begin(), mesh_notes.end());
    if (out.parts.empty())
        fail_input(where, "no triangles: no face of the " + format + " file could be meshed (" +
                              std::to_string(reader.parts_of.size()) + " shapes)");
    for (std::size_t g = 0; g < out.geometries.size(); ++g) {
        if (!out.geometries[g].baked.empty()) continue;
        GProp_GProps surface, volume;
        BRepGProp::SurfaceProperties(geometry_shapes[g], surface);
        out.geometries[g].exact_area = surface.Mass() * soup_per_shape * soup_per_shape;
        if (TopExp_Explorer(geometry_shapes[g], TopAbs_SOLID).More()) {  // a volume only where solids bound one
            BRepGProp::VolumeProperties(geometry_shapes[g], volume);
            out.geometries[g].exact_volume = std::abs(volume.Mass()) * soup_per_shape * soup_per_shape * soup_per_shape;
        }
    }
    return out;
}

}  // namespace

namespace {

// The read, every OpenCASCADE call of it, on this thread in a guarded block (mesh/cad_guard.hpp),
// the meshing on the threads of run_cad_tasks: a signal in OpenCASCADE that no guard of its own
// catches becomes one line naming the file (and the part being meshed), exit 3. OpenCASCADE's
// translators catch most such failures per entity and go on with the rest. One file at a time in
// a process: the signal handlers are the process's, and they are put back after each read.
Assembly read_guarded(const std::filesystem::path& path, const MeshLoadOptions& options) {
    static std::mutex one_read;
    const std::lock_guard<std::mutex> lock(one_read);
    const CadSignals signals;
    Assembly out;
    const std::optional<CadTaskFailure> failure = run_cad_tasks(1, 1, [&](std::size_t) { out = read_cad(path, options); });
    if (failure)
        fail_input(path.string(), "OpenCASCADE failed on the file (" + failure->what + "); the file is damaged: check or export it again");
    return out;
}

}  // namespace

}  // namespace hp

// The module's entry (mesh/cad.hpp loads it): fills `out` or throws hp::Error, as
// read_cad_assembly() documents. Its ABI key must equal the caller's.
extern "C" __attribute__((visibility("default"))) const char* hp_cad_abi_v1() {
    static const std::string key = hp::cad_abi_key();
    return key.c_str();
}

extern "C" __attribute__((visibility("default"))) void hp_cad_read_v1(const std::filesystem::path& path,
                                                                     const hp::MeshLoadOptions& options, hp::Assembly& out) {
    out = hp::read_guarded(path, options);
}
