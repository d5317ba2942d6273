"""Reads a wgdem `.pvd` series with VTK's own XML readers (the ones ParaView uses) and prints,
as JSON, what each part of the last snapshot carries: the number of points and cells and every
array's name, component count and tuple count, the field data's strings, and whether any
array holds a NaN; and the point and cell arrays that meshio and pyvista find in the same
files (`"others"`, by reader; a reader that fails is an error). Exits non-zero if a reader
reports an error or a file is missing.

Usage: python read_series.py DIR/vtk/NAME.pvd
"""

import json
import math
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import vtk


class Errors:
    """Collects the errors and warnings a VTK reader raises."""

    def __init__(self):
        self.messages = []

    def __call__(self, obj, event):
        self.messages.append(f"{event} from {obj.GetClassName()}")


def arrays(data):
    out = {}
    for n in range(data.GetNumberOfArrays()):
        a = data.GetAbstractArray(n)
        values = [a.GetComponent(t, c) for t in range(a.GetNumberOfTuples())
                  for c in range(a.GetNumberOfComponents())] if hasattr(a, "GetComponent") else []
        out[a.GetName()] = {
            "components": a.GetNumberOfComponents(),
            "tuples": a.GetNumberOfTuples(),
            "has_nan": any(math.isnan(v) for v in values),
        }
    return out


def field_strings(data):
    out = {}
    for n in range(data.GetNumberOfArrays()):
        a = data.GetAbstractArray(n)
        if isinstance(a, vtk.vtkStringArray):
            out[a.GetName()] = [a.GetValue(k) for k in range(a.GetNumberOfValues())]
    return out


def read(path):
    reader = vtk.vtkXMLUnstructuredGridReader()
    errors = Errors()
    reader.AddObserver("ErrorEvent", errors)
    reader.AddObserver("WarningEvent", errors)
    reader.SetFileName(str(path))
    reader.Update()
    data = reader.GetOutput()
    if errors.messages:
        raise SystemExit(f"{path}: {errors.messages}")
    return {
        "file": path.name,
        "points": data.GetNumberOfPoints(),
        "cells": data.GetNumberOfCells(),
        "point_data": arrays(data.GetPointData()),
        "cell_data": arrays(data.GetCellData()),
        "field_data": field_strings(data.GetFieldData()),
    }


def main():
    pvd = Path(sys.argv[1])
    root = ET.parse(pvd).getroot()
    datasets = root.findall("./Collection/DataSet")
    if not datasets:
        raise SystemExit(f"{pvd}: no DataSet")
    times = sorted({float(d.get("timestep")) for d in datasets})
    last = [d for d in datasets if float(d.get("timestep")) == times[-1]]
    for d in datasets:
        if not (pvd.parent / d.get("file")).exists():
            raise SystemExit(f"{pvd}: {d.get('file')} is missing")
    parts = {d.get("part"): read(pvd.parent / d.get("file")) for d in last}
    others = {d.get("part"): read_others(pvd.parent / d.get("file")) for d in last}
    print(json.dumps({"snapshots": len(times), "times": times, "last": parts, "others": others}, indent=1))


def read_others(path):
    """The point and cell array names meshio and pyvista read from `path`, with the counts."""
    import meshio
    import pyvista

    m = meshio.read(path)
    p = pyvista.read(path)
    return {
        "meshio": {
            "points": len(m.points),
            "point_data": sorted(m.point_data),
            "cell_data": sorted(m.cell_data),
        },
        "pyvista": {
            "points": p.n_points,
            "point_data": sorted(p.point_data.keys()),
            "cell_data": sorted(p.cell_data.keys()),
        },
    }


if __name__ == "__main__":
    main()
