; fusegrad x86-64 kernel if_endif
if_endif:
     0: 4883ec18                       sub rsp, 0x18
     4: 48893c24                       mov qword ptr [rsp], rdi
     8: 4889742408                     mov qword ptr [rsp + 8], rsi
     d: 488b3424                       mov rsi, qword ptr [rsp]
    11: 488b7c2408                     mov rdi, qword ptr [rsp + 8]
    16: 41b800000000                   mov r8d, 0
.Lloop1:
    1c: 4983f808                       cmp r8, 8
    20: 0f8d32000000                   jge .Lexit2
    26: 4983f803                       cmp r8, 3
    2a: 410f9cc1                       setl r9b
    2e: 450fb6c9                       movzx r9d, r9b
    32: 4585c9                         test r9d, r9d
    35: 0f8414000000                   je .Lendif3
    3b: c4a17a100486                   vmovss xmm0, dword ptr [rsi + r8*4]
    41: c5fa590517000000               vmulss xmm0, xmm0, dword ptr [rip + .LC0]
    49: c4a17a110487                   vmovss dword ptr [rdi + r8*4], xmm0
.Lendif3:
    4f: 4983c001                       add r8, 1
    53: e9c4ffffff                     jmp .Lloop1
.Lexit2:
    58: 4883c418                       add rsp, 0x18
    5c: c3                             ret
    5d: cccccc                         ; padding
.LC0:
    60: 0000004000000040000000400000004000000040000000400000004000000040 ; f32 2.0 / f64 2.000000476837158
