#version 450
// Stripes over the colour: fine detail, so the mip levels and patches differ visibly.
layout(location = 0) in vec3 color;
layout(location = 0) out vec4 target;

void main() {
    target = vec4(color * (0.7 + 0.3 * sin(gl_FragCoord.x * 0.6 + gl_FragCoord.y * 0.2)), 1.0);
}
