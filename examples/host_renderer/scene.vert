#version 450
// Nine spinning triangles: the example renderer's scene (no vertex buffer).
layout(push_constant) uniform Frame { float time; } frame;
layout(location = 0) out vec3 color;

void main() {
    const vec2 corners[3] = vec2[](vec2(0.0, -0.5), vec2(0.45, 0.35), vec2(-0.45, 0.35));
    int tri = gl_VertexIndex / 3;
    vec2 centre = vec2(float(tri % 3) - 1.0, float(tri / 3) - 1.0) * 0.62;
    float a = frame.time * (0.5 + 0.3 * float(tri));
    mat2 turn = mat2(cos(a), sin(a), -sin(a), cos(a));
    gl_Position = vec4(centre + turn * corners[gl_VertexIndex % 3] * 0.55, 0.0, 1.0);
    color = vec3(float(tri % 3) / 2.0, float(tri / 3) / 2.0, 1.0 - float(tri) / 8.0);
}
