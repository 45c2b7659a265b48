; fusegrad x86-64 kernel multicore
multicore:
     0: 53                             push rbx
     1: 4881ecc0000000                 sub rsp, 0xc0
     8: 48893c24                       mov qword ptr [rsp], rdi
     c: 4889742408                     mov qword ptr [rsp + 8], rsi
    11: 4889542410                     mov qword ptr [rsp + 0x10], rdx
    16: 488b3424                       mov rsi, qword ptr [rsp]
    1a: 488b7c2408                     mov rdi, qword ptr [rsp + 8]
    1f: 4c63442410                     movsxd r8, dword ptr [rsp + 0x10]
    24: 41b900000000                   mov r9d, 0
.Lloop1:
    2a: 4983f905                       cmp r9, 5
    2e: 0f8d29000000                   jge .Lexit2
    34: 416bd805                       imul ebx, r8d, 5
    38: 4863db                         movsxd rbx, ebx
    3b: 4401cb                         add ebx, r9d
    3e: 4863db                         movsxd rbx, ebx
    41: c5fa10049e                     vmovss xmm0, dword ptr [rsi + rbx*4]
    46: c4c1f22ac8                     vcvtsi2ss xmm1, xmm1, r8
    4b: c5fa58c1                       vaddss xmm0, xmm0, xmm1
    4f: c5fa11049f                     vmovss dword ptr [rdi + rbx*4], xmm0
    54: 4983c101                       add r9, 1
    58: e9cdffffff                     jmp .Lloop1
.Lexit2:
    5d: c5f877                         vzeroupper
    60: 4881c4c0000000                 add rsp, 0xc0
    67: 5b                             pop rbx
    68: c3                             ret
