; fusegrad x86-64 kernel if_endif
if_endif:
     0: 4881ecb8000000                 sub rsp, 0xb8
     7: 48893c24                       mov qword ptr [rsp], rdi
     b: 4889742408                     mov qword ptr [rsp + 8], rsi
    10: 488b3424                       mov rsi, qword ptr [rsp]
    14: 488b7c2408                     mov rdi, qword ptr [rsp + 8]
    19: 41b800000000                   mov r8d, 0
.Lloop1:
    1f: 4983f808                       cmp r8, 8
    23: 0f8d32000000                   jge .Lexit2
    29: 4983f803                       cmp r8, 3
    2d: 410f9cc1                       setl r9b
    31: 450fb6c9                       movzx r9d, r9b
    35: 4585c9                         test r9d, r9d
    38: 0f8414000000                   je .Lendif3
    3e: c4a17a100486                   vmovss xmm0, dword ptr [rsi + r8*4]
    44: c5fa590534000000               vmulss xmm0, xmm0, dword ptr [rip + .LC0]
    4c: c4a17a110487                   vmovss dword ptr [rdi + r8*4], xmm0
.Lendif3:
    52: 4983c001                       add r8, 1
    56: e9c4ffffff                     jmp .Lloop1
.Lexit2:
    5b: c5f877                         vzeroupper
    5e: 4881c4b8000000                 add rsp, 0xb8
    65: c3                             ret
    66: cccccccccccccccccccccccccccccccccccccccccccccccccccc ; padding
.LC0:
    80: 0000004000000040000000400000004000000040000000400000004000000040 ; f32 2.0 / f64 2.000000476837158
