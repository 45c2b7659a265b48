; fusegrad x86-64 kernel multicore
multicore:
     0: 53                             push rbx
     1: 55                             push rbp
     2: 4883ec18                       sub rsp, 0x18
     6: 48893c24                       mov qword ptr [rsp], rdi
     a: 4889742408                     mov qword ptr [rsp + 8], rsi
     f: 4889542410                     mov qword ptr [rsp + 0x10], rdx
    14: 488b3424                       mov rsi, qword ptr [rsp]
    18: 488b7c2408                     mov rdi, qword ptr [rsp + 8]
    1d: 4c63442410                     movsxd r8, dword ptr [rsp + 0x10]
    22: 41b900000000                   mov r9d, 0
.Lloop1:
    28: 4983f905                       cmp r9, 5
    2c: 0f8d35000000                   jge .Lexit2
    32: 4c89c3                         mov rbx, r8
    35: 48c7c505000000                 mov rbp, 5
    3c: 0fafdd                         imul ebx, ebp
    3f: 4863db                         movsxd rbx, ebx
    42: 4889db                         mov rbx, rbx
    45: 4401cb                         add ebx, r9d
    48: 4863db                         movsxd rbx, ebx
    4b: c5fa10049e                     vmovss xmm0, dword ptr [rsi + rbx*4]
    50: c4c1f22ac8                     vcvtsi2ss xmm1, xmm1, r8
    55: c5fa58c1                       vaddss xmm0, xmm0, xmm1
    59: c5fa11049f                     vmovss dword ptr [rdi + rbx*4], xmm0
    5e: 4983c101                       add r9, 1
    62: e9c1ffffff                     jmp .Lloop1
.Lexit2:
    67: 4883c418                       add rsp, 0x18
    6b: 5d                             pop rbp
    6c: 5b                             pop rbx
    6d: c3                             ret
