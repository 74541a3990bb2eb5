"""hapticprep from Python: the toolchain's files as numpy arrays and the VPS query.

Every loader reads a file with the toolchain's own C++ readers, which validate it completely
(checksums, structure) before anything is returned; a damaged or wrong file raises
hapticprep.Error with the one-line message the executables print, and its exit code in
``exit_code``.

    import hapticprep as hp
    field = hp.load_distance("part.dist.vdb")    # field.distance[i, j, k], field.grid, field.metadata
    tree = hp.load_tree("tool.hps")              # tree.points, tree.center, tree.radius, tree.level
    q = hp.Query(field, tree)                    # or file names
    r = q.run([0.01, 0, 0], [1, 0, 0, 0])        # r.force, r.torque, r.contacts.position

Reference: docs/python.md of the source tree.
"""
from ._hapticprep import (  # noqa: F401
    Cfm,
    Contacts,
    DistanceField,
    Error,
    Grid,
    Mesh,
    Pointshell,
    Query,
    QueryResult,
    Scene,
    Tree,
    Voxelmap,
    __version__,
    check,
    describe,
    load,
    load_cfm,
    load_distance,
    load_mesh,
    load_pointshell,
    load_tree,
    load_voxelmap,
)

__all__ = [
    "Cfm", "Contacts", "DistanceField", "Error", "Grid", "Mesh", "Pointshell", "Query", "QueryResult",
    "Scene", "Tree", "Voxelmap", "check", "describe", "load", "load_cfm", "load_distance", "load_mesh",
    "load_pointshell", "load_tree", "load_voxelmap",
]
