; fusegrad x86-64 kernel reduce_add_float32
reduce_add_float32:
     0: 53                             push rbx
     1: 4881ecb0000000                 sub rsp, 0xb0
     8: 48893c24                       mov qword ptr [rsp], rdi
     c: 4889742408                     mov qword ptr [rsp + 8], rsi
    11: 488b3424                       mov rsi, qword ptr [rsp]
    15: 488b7c2408                     mov rdi, qword ptr [rsp + 8]
    1a: 41b800000000                   mov r8d, 0
.Lloop1:
    20: 4983f803                       cmp r8, 3
    24: 0f8d46000000                   jge .Lexit2
    2a: c5fa10054e000000               vmovss xmm0, dword ptr [rip + .LC0]
    32: 41b900000000                   mov r9d, 0
.Lloop3:
    38: 4983f904                       cmp r9, 4
    3c: 0f8d1f000000                   jge .Lexit4
    42: 416bd804                       imul ebx, r8d, 4
    46: 4863db                         movsxd rbx, ebx
    49: 4401cb                         add ebx, r9d
    4c: 4863db                         movsxd rbx, ebx
    4f: c5fa100c9e                     vmovss xmm1, dword ptr [rsi + rbx*4]
    54: c5fa58c1                       vaddss xmm0, xmm0, xmm1
    58: 4983c101                       add r9, 1
    5c: e9d7ffffff                     jmp .Lloop3
.Lexit4:
    61: c4a17a110487                   vmovss dword ptr [rdi + r8*4], xmm0
    67: 4983c001                       add r8, 1
    6b: e9b0ffffff                     jmp .Lloop1
.Lexit2:
    70: c5f877                         vzeroupper
    73: 4881c4b0000000                 add rsp, 0xb0
    7a: 5b                             pop rbx
    7b: c3                             ret
    7c: cccccccc                       ; padding
.LC0:
    80: 0000000000000000000000000000000000000000000000000000000000000000 ; f32 0.0 / f64 0.0
