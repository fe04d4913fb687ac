`default_nettype none
`include "chip_defs.vh"
// chip_top: the int8 LLM accelerator (hw/ISA.md).
//
// The controller fetches and checks instructions and hands each one to its unit: the DMA
// (LOAD, STORE), the paged DMA (PLOAD, PSTORE, PCOPY: rows through a block table), the matrix
// unit (MATMUL), the vector unit (VADD, VMAX, ARGMAX) or the softmax unit (SOFTMAX). One unit
// runs at a time, so the SRAM ports and the memory interface unit's unit side are plain
// multiplexers on the controller's unit selects. The memory interface unit (mem_if) is the one
// module on the AXI4 port; when it freezes a cycle (`mem_stall`: the chip waits on memory) the
// controller, the DMA and the paged DMA hold their state, and nothing is written to the SRAM
// (the other units never run while a memory transfer is pending).
module chip_top #(
    parameter ARRAY_N    = `ARRAY_N_DEFAULT,       // the systolic array is ARRAY_N x ARRAY_N
    parameter K_MAX      = `K_MAX_DEFAULT,         // the longest MATMUL reduction
    parameter SRAM_WORDS = `SRAM_WORDS_DEFAULT,    // on-chip scratchpad, 32-bit words
    parameter EXT_WORDS  = `EXT_WORDS_DEFAULT,     // external words the chip may address
    parameter EXT_LAT    = `EXT_LAT_DEFAULT,       // the ideal memory's read latency (hw/ISA.md)
    parameter SM_MAX     = `SM_MAX_DEFAULT         // the longest SOFTMAX vector
) (
    input  wire        clk,
    input  wire        rst,

    // host
    input  wire        start,
    output wire        busy,
    output wire        done,
    output wire [`ERROR_W-1:0] error,
    output wire [15:0] error_pc,

    // external memory: the AXI4 manager port (hw/ISA.md, "The AXI4 manager port")
    output wire [0:0]  m_axi_arid,
    output wire [31:0] m_axi_araddr,
    output wire [7:0]  m_axi_arlen,
    output wire [2:0]  m_axi_arsize,
    output wire [1:0]  m_axi_arburst,
    output wire        m_axi_arvalid,
    input  wire        m_axi_arready,
    input  wire [0:0]  m_axi_rid,
    input  wire [31:0] m_axi_rdata,
    input  wire [1:0]  m_axi_rresp,
    input  wire        m_axi_rlast,
    input  wire        m_axi_rvalid,
    output wire        m_axi_rready,
    output wire [0:0]  m_axi_awid,
    output wire [31:0] m_axi_awaddr,
    output wire [7:0]  m_axi_awlen,
    output wire [2:0]  m_axi_awsize,
    output wire [1:0]  m_axi_awburst,
    output wire        m_axi_awvalid,
    input  wire        m_axi_awready,
    output wire [31:0] m_axi_wdata,
    output wire [3:0]  m_axi_wstrb,
    output wire        m_axi_wlast,
    output wire        m_axi_wvalid,
    input  wire        m_axi_wready,
    input  wire [0:0]  m_axi_bid,
    input  wire [1:0]  m_axi_bresp,
    input  wire        m_axi_bvalid,
    output wire        m_axi_bready,

    // the counters (hw/ISA.md, "Counters"): counter X at counters[`X] (chip_defs.vh)
    output wire [`COUNTERS_W-1:0] counters
);

localparam SRAM_AW = $clog2(SRAM_WORDS);    // SRAM address width

// ---------------------------------------------------------------------------------------------
// controller

wire [7:0]  op_m, op_k, op_n, op_flags, op_shift;
wire [15:0] op_len, op_a, op_b, op_c;
wire [31:0] op_mult;
wire [15:0] pg_page_rows, pg_first_entry;    // the paged geometry (the controller's instance)
wire [23:0] pg_words;
wire [31:0] pg_entries;
wire        go_load, go_store, go_matmul, go_vadd, go_vmax, go_argmax, go_softmax;
wire        go_pload, go_pstore, go_pcopy;
wire        sel_dma, sel_mat, sel_vec, sel_sm, sel_pdma;
wire        mem_clear, fetch_cmd;
wire [15:0] fetch_addr;

// the memory interface unit's unit side
wire        mem_stall, mem_bus_err, rd_valid, fence_done;
wire [31:0] rd_data;

wire dma_done, mat_done, vec_done, sm_done, pdma_done;
wire pdma_fault, pdma_table_word, pdma_data_word;
wire mat_sat, vec_sat;
wire sm_exp_valid;
wire [7:0] sm_exp_index;
wire dma_we, dma_push;
wire sram_rd_a_bad, sram_rd_b_bad;    // a word read failed its parity (hw/ISA.md, "CORRUPTION")

controller #(
    .EXT_WORDS  (EXT_WORDS),
    .SRAM_WORDS (SRAM_WORDS),
    .K_MAX      (K_MAX),
    .SM_MAX     (SM_MAX)
) u_controller (
    .clk        (clk),
    .rst        (rst),
    .start      (start),
    .busy       (busy),
    .done       (done),
    .error      (error),
    .error_pc   (error_pc),
    .stall      (mem_stall),
    .bus_err    (mem_bus_err),
    .mem_clear  (mem_clear),
    .fetch_cmd  (fetch_cmd),
    .fetch_addr (fetch_addr),
    .rd_valid   (rd_valid),
    .rd_data    (rd_data),
    .op_m       (op_m),
    .op_k       (op_k),
    .op_n       (op_n),
    .op_len     (op_len),
    .op_a       (op_a),
    .op_b       (op_b),
    .op_c       (op_c),
    .op_flags   (op_flags),
    .op_shift   (op_shift),
    .op_mult    (op_mult),
    .pg_page_rows   (pg_page_rows),
    .pg_words       (pg_words),
    .pg_first_entry (pg_first_entry),
    .pg_entries     (pg_entries),
    .go_load    (go_load),
    .go_store   (go_store),
    .go_matmul  (go_matmul),
    .go_vadd    (go_vadd),
    .go_vmax    (go_vmax),
    .go_argmax  (go_argmax),
    .go_softmax (go_softmax),
    .go_pload   (go_pload),
    .go_pstore  (go_pstore),
    .go_pcopy   (go_pcopy),
    .sel_dma    (sel_dma),
    .sel_mat    (sel_mat),
    .sel_vec    (sel_vec),
    .sel_sm     (sel_sm),
    .sel_pdma   (sel_pdma),
    .unit_done  (dma_done || mat_done || vec_done || sm_done || pdma_done),
    .unit_fault (pdma_fault),
    .sat_event  (mat_sat || vec_sat),
    .dma_word   ((sel_dma && (dma_we || dma_push)) ||       // one write per word: SRAM (LOAD),
                 (sel_pdma && pdma_data_word)),             // ext (STORE), its destination (paged)
    .sm_exp_valid (sm_exp_valid),
    .sm_exp_index (sm_exp_index),
    .pt_word    (sel_pdma && pdma_table_word),
    .sram_a_bad (sram_rd_a_bad),
    .sram_b_bad (sram_rd_b_bad),
    .counters   (counters)
);

// ---------------------------------------------------------------------------------------------
// SRAM

wire [SRAM_AW-1:0]     sram_rd_a_addr, sram_rd_b_addr, sram_wr_addr;
wire [32*ARRAY_N-1:0]  sram_rd_a_lanes;    // port A: ARRAY_N words, for the matrix unit
wire [31:0]            sram_rd_a_data, sram_rd_b_data, sram_wr_data;
wire                   sram_wr_en;

assign sram_rd_a_data = sram_rd_a_lanes[31:0];    // the word at sram_rd_a_addr

sram #(
    .SRAM_WORDS (SRAM_WORDS),
    .LANES      (ARRAY_N)
) u_sram (
    .clk       (clk),
    .rd_a_addr (sram_rd_a_addr),
    .rd_a_data (sram_rd_a_lanes),
    .rd_a_bad  (sram_rd_a_bad),
    .rd_b_addr (sram_rd_b_addr),
    .rd_b_data (sram_rd_b_data),
    .rd_b_bad  (sram_rd_b_bad),
    .wr_en     (sram_wr_en),
    .wr_addr   (sram_wr_addr),
    .wr_data   (sram_wr_data)
);

// ---------------------------------------------------------------------------------------------
// units

wire [SRAM_AW-1:0] dma_raddr, dma_waddr;
wire [31:0]        dma_wdata;
wire [15:0]        dma_mem_addr, dma_mem_len;
wire               dma_rd_cmd, dma_wr_cmd, dma_fence;
wire [31:0]        dma_push_data;

dma #(
    .SRAM_AW (SRAM_AW)
) u_dma (
    .clk           (clk),
    .rst           (rst),
    .stall         (mem_stall),
    .cmd_load      (go_load),
    .cmd_store     (go_store),
    .cmd_ext_addr  (op_a),
    .cmd_sram_addr (op_b),
    .cmd_len       (op_len),
    .done          (dma_done),
    .mem_addr      (dma_mem_addr),
    .mem_len       (dma_mem_len),
    .rd_cmd        (dma_rd_cmd),
    .rd_valid      (rd_valid),
    .rd_data       (rd_data),
    .wr_cmd        (dma_wr_cmd),
    .wr_push       (dma_push),
    .wr_data       (dma_push_data),
    .fence         (dma_fence),
    .fence_done    (fence_done),
    .sram_raddr    (dma_raddr),
    .sram_rdata    (sram_rd_a_data),
    .sram_we       (dma_we),
    .sram_waddr    (dma_waddr),
    .sram_wdata    (dma_wdata)
);

wire [SRAM_AW-1:0] pdma_raddr, pdma_waddr;
wire [31:0]        pdma_wdata;
wire               pdma_we;
wire [15:0]        pdma_mem_addr, pdma_mem_len;
wire               pdma_rd_cmd, pdma_wr_cmd, pdma_push, pdma_fence;
wire [31:0]        pdma_push_data;

pdma #(
    .SRAM_AW (SRAM_AW)
) u_pdma (
    .clk            (clk),
    .rst            (rst),
    .stall          (mem_stall),
    .cmd_pload      (go_pload),
    .cmd_pstore     (go_pstore),
    .cmd_pcopy      (go_pcopy),
    .cmd_table      (op_a),
    .cmd_sram       (op_b),
    .cmd_pool       (op_c),
    .cmd_row_words  (op_m),
    .cmd_len        (op_len),
    .cmd_page_shift (op_shift),
    .cmd_row        (op_mult[31:16]),
    .cmd_pages      (op_mult[15:0]),
    .cmd_page_rows  (pg_page_rows),
    .cmd_words      (pg_words),
    .cmd_first_entry (pg_first_entry),
    .cmd_entries    (pg_entries),
    .done           (pdma_done),
    .fault          (pdma_fault),
    .table_word     (pdma_table_word),
    .data_word      (pdma_data_word),
    .mem_addr       (pdma_mem_addr),
    .mem_len        (pdma_mem_len),
    .rd_cmd         (pdma_rd_cmd),
    .rd_valid       (rd_valid),
    .rd_data        (rd_data),
    .wr_cmd         (pdma_wr_cmd),
    .wr_push        (pdma_push),
    .wr_data        (pdma_push_data),
    .fence          (pdma_fence),
    .fence_done     (fence_done),
    .sram_raddr     (pdma_raddr),
    .sram_rdata     (sram_rd_a_data),
    .sram_we        (pdma_we),
    .sram_waddr     (pdma_waddr),
    .sram_wdata     (pdma_wdata)
);

wire [SRAM_AW-1:0] mat_raddr, mat_waddr;
wire               mat_we;
wire [31:0]        mat_wdata;

matrix_unit #(
    .ARRAY_N (ARRAY_N),
    .K_MAX   (K_MAX),
    .SRAM_AW (SRAM_AW)
) u_matrix_unit (
    .clk        (clk),
    .rst        (rst),
    .cmd_matmul (go_matmul),
    .cmd_a      (op_a),
    .cmd_b      (op_b),
    .cmd_c      (op_c),
    .cmd_m      (op_m),
    .cmd_k      (op_k),
    .cmd_n      (op_n),
    .cmd_flags  (op_flags),
    .cmd_shift  (op_shift),
    .cmd_mult   (op_mult),
    .done       (mat_done),
    .sat        (mat_sat),
    .sram_raddr (mat_raddr),
    .sram_rdata (sram_rd_a_lanes),
    .sram_we    (mat_we),
    .sram_waddr (mat_waddr),
    .sram_wdata (mat_wdata)
);

wire [SRAM_AW-1:0] vec_raddr_a, vec_raddr_b, vec_waddr;
wire               vec_we;
wire [31:0]        vec_wdata;

vector_unit #(
    .SRAM_AW (SRAM_AW)
) u_vector_unit (
    .clk          (clk),
    .rst          (rst),
    .cmd_vadd     (go_vadd),
    .cmd_vmax     (go_vmax),
    .cmd_argmax   (go_argmax),
    .cmd_a        (op_a),
    .cmd_b        (op_b),
    .cmd_c        (op_c),
    .cmd_len      (op_len),
    .done         (vec_done),
    .sat          (vec_sat),
    .sram_raddr_a (vec_raddr_a),
    .sram_rdata_a (sram_rd_a_data),
    .sram_raddr_b (vec_raddr_b),
    .sram_rdata_b (sram_rd_b_data),
    .sram_we      (vec_we),
    .sram_waddr   (vec_waddr),
    .sram_wdata   (vec_wdata)
);

wire [SRAM_AW-1:0] sm_raddr, sm_waddr;
wire               sm_we;
wire [31:0]        sm_wdata;

softmax_unit #(
    .SRAM_AW (SRAM_AW),
    .SM_MAX  (SM_MAX)
) u_softmax_unit (
    .clk         (clk),
    .rst         (rst),
    .cmd_softmax (go_softmax),
    .cmd_a       (op_a),
    .cmd_c       (op_c),
    .cmd_len     (op_len),
    .done        (sm_done),
    .exp_valid   (sm_exp_valid),
    .exp_index   (sm_exp_index),
    .sram_raddr  (sm_raddr),
    .sram_rdata  (sram_rd_a_data),
    .sram_we     (sm_we),
    .sram_waddr  (sm_waddr),
    .sram_wdata  (sm_wdata)
);

// ---------------------------------------------------------------------------------------------
// port multiplexers: the selected unit owns the SRAM; the DMA or the paged DMA owns the memory
// interface unit in EXEC, the controller's fetch otherwise

assign sram_rd_a_addr = sel_dma ? dma_raddr :
                        sel_pdma ? pdma_raddr :
                        sel_mat ? mat_raddr :
                        sel_vec ? vec_raddr_a :
                                  sm_raddr;
assign sram_rd_b_addr = vec_raddr_b;
assign sram_wr_en     = ((sel_dma && dma_we) || (sel_pdma && pdma_we) || (sel_mat && mat_we) ||
                         (sel_vec && vec_we) || (sel_sm && sm_we)) && !mem_stall;
assign sram_wr_addr   = sel_dma ? dma_waddr :
                        sel_pdma ? pdma_waddr :
                        sel_mat ? mat_waddr :
                        sel_vec ? vec_waddr :
                                  sm_waddr;
assign sram_wr_data   = sel_dma ? dma_wdata :
                        sel_pdma ? pdma_wdata :
                        sel_mat ? mat_wdata :
                        sel_vec ? vec_wdata :
                                  sm_wdata;

wire [15:0] stream_addr = sel_dma ? dma_mem_addr : sel_pdma ? pdma_mem_addr : fetch_addr;
wire [15:0] stream_len  = sel_dma ? dma_mem_len : sel_pdma ? pdma_mem_len : 16'd4;
wire        rd_cmd      = sel_dma ? dma_rd_cmd : sel_pdma ? pdma_rd_cmd : fetch_cmd;
wire        wr_cmd      = (sel_dma && dma_wr_cmd) || (sel_pdma && pdma_wr_cmd);
wire        wr_push     = (sel_dma && dma_push) || (sel_pdma && pdma_push);
wire [31:0] wr_data     = sel_pdma ? pdma_push_data : dma_push_data;
wire        fence       = (sel_dma && dma_fence) || (sel_pdma && pdma_fence);

mem_if #(
    .EXT_LAT (EXT_LAT)
) u_mem_if (
    .clk           (clk),
    .rst           (rst),
    .clear         (mem_clear),
    .stall         (mem_stall),
    .bus_err       (mem_bus_err),
    .rd_cmd        (rd_cmd),
    .rd_addr       (stream_addr),
    .rd_len        (stream_len),
    .rd_valid      (rd_valid),
    .rd_data       (rd_data),
    .wr_cmd        (wr_cmd),
    .wr_addr       (stream_addr),
    .wr_len        (stream_len),
    .wr_push       (wr_push),
    .wr_data       (wr_data),
    .fence         (fence),
    .fence_done    (fence_done),
    .m_axi_arid    (m_axi_arid),
    .m_axi_araddr  (m_axi_araddr),
    .m_axi_arlen   (m_axi_arlen),
    .m_axi_arsize  (m_axi_arsize),
    .m_axi_arburst (m_axi_arburst),
    .m_axi_arvalid (m_axi_arvalid),
    .m_axi_arready (m_axi_arready),
    .m_axi_rid     (m_axi_rid),
    .m_axi_rdata   (m_axi_rdata),
    .m_axi_rresp   (m_axi_rresp),
    .m_axi_rlast   (m_axi_rlast),
    .m_axi_rvalid  (m_axi_rvalid),
    .m_axi_rready  (m_axi_rready),
    .m_axi_awid    (m_axi_awid),
    .m_axi_awaddr  (m_axi_awaddr),
    .m_axi_awlen   (m_axi_awlen),
    .m_axi_awsize  (m_axi_awsize),
    .m_axi_awburst (m_axi_awburst),
    .m_axi_awvalid (m_axi_awvalid),
    .m_axi_awready (m_axi_awready),
    .m_axi_wdata   (m_axi_wdata),
    .m_axi_wstrb   (m_axi_wstrb),
    .m_axi_wlast   (m_axi_wlast),
    .m_axi_wvalid  (m_axi_wvalid),
    .m_axi_wready  (m_axi_wready),
    .m_axi_bid     (m_axi_bid),
    .m_axi_bresp   (m_axi_bresp),
    .m_axi_bvalid  (m_axi_bvalid),
    .m_axi_bready  (m_axi_bready)
);

endmodule

`default_nettype wire
