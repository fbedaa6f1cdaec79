// A plate with an elliptic (airfoil-like) hole, finer near the hole: a stand-in for the
// unstructured mesh of kaddoura-ranka-1995 Figure 9. Made with Debian gmsh 4.8.4:
//   gmsh -2 airfoil.geo -format msh41 -o airfoil.msh                      (29,996 vertices)
//   gmsh -2 airfoil.geo -setnumber h_far 0.3 -setnumber h_near 0.08 -format msh22 -o airfoil_small.msh
If (!Exists(h_far)) h_far = 0.04; EndIf
If (!Exists(h_near)) h_near = 0.008; EndIf
Point(1) = {-2, -1.5, 0, h_far};
Point(2) = {3, -1.5, 0, h_far};
Point(3) = {3, 1.5, 0, h_far};
Point(4) = {-2, 1.5, 0, h_far};
Line(1) = {1, 2}; Line(2) = {2, 3}; Line(3) = {3, 4}; Line(4) = {4, 1};
Point(5) = {0.5, 0, 0, h_near};
Point(6) = {1.0, 0, 0, h_near};
Point(7) = {0.5, 0.12, 0, h_near};
Point(8) = {0.0, 0, 0, h_near};
Point(9) = {0.5, -0.12, 0, h_near};
Ellipse(5) = {6, 5, 6, 7}; Ellipse(6) = {7, 5, 6, 8}; Ellipse(7) = {8, 5, 6, 9}; Ellipse(8) = {9, 5, 6, 6};
Curve Loop(1) = {1, 2, 3, 4};
Curve Loop(2) = {5, 6, 7, 8};
Plane Surface(1) = {1, 2};
Field[1] = Distance; Field[1].CurvesList = {5, 6, 7, 8}; Field[1].Sampling = 200;
Field[2] = Threshold; Field[2].InField = 1; Field[2].SizeMin = h_near; Field[2].SizeMax = h_far;
Field[2].DistMin = 0.02; Field[2].DistMax = 1.5;
Background Field = 2;
Mesh.MeshSizeExtendFromBoundary = 0; Mesh.MeshSizeFromPoints = 0; Mesh.MeshSizeFromCurvature = 0;
Mesh.Algorithm = 6;
